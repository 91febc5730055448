//! Building each tree's worker, linking its code layouts, and asking it what it can measure.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use tdbench_contract::{Catalog, Role, library};

use super::failure::{Failure, environment};
use super::relink::LinkCommand;
use crate::plan::{Build, MEASUREMENT_PROFILE, Slot, TreeInfo};

/// A tree, where it builds, and what its worker says it can measure.
pub struct Built {
    pub info: TreeInfo,
    /// The target folder the tree builds into.
    pub target: PathBuf,
    pub catalog: Catalog,
    /// The tree's kernel library for in-process pairs (`kernels/`), or why it has none.
    pub kernels: Result<(), String>,
    /// The tree's `counter` (instruction and allocation counts), or why it has none.
    pub counter: Result<(), String>,
    /// How its measured binaries are built (also in `info`, for the plan).
    pub build: Build,
}

impl Built {
    /// The counter as cargo built it.
    pub fn counter_binary(&self) -> PathBuf {
        self.target.join("release/counter")
    }
}

pub struct Trees {
    pub current: Built,
    pub baseline: Option<Built>,
    /// Layouts linked by this invocation (role, seed, what): a run's looks and confirmation
    /// reuse those of the samples they share (none: each new sample gets its own).
    pub linked: RefCell<HashSet<(Role, u32, Linked)>>,
}

/// Per target folder and binary, the linker command captured by its first layout in this
/// invocation (`None`: replaying is off, every layout goes through cargo). Kept for the whole
/// invocation, not per [`Trees`]: a calibration's cases share the baseline's target folder, and
/// cargo, asked a second time with the same flags, links nothing and prints no command — which
/// turned replaying off for every other case (a look took 28 s to link instead of 3).
static LINK_COMMANDS: Mutex<BTreeMap<(PathBuf, Linked), Option<LinkCommand>>> = Mutex::new(BTreeMap::new());

impl Trees {
    pub fn get(&self, role: Role) -> &Built {
        match role {
            Role::Current => &self.current,
            Role::Baseline => self.baseline.as_ref().expect("baseline slots only with a baseline"),
        }
    }

    pub fn roles(&self) -> Vec<Role> {
        if self.baseline.is_some() { vec![Role::Baseline, Role::Current] } else { vec![Role::Current] }
    }

    /// The worker of `role`'s tree as sample `sample` runs it: linked with that sample's code
    /// layout in the run being measured (see [`layout_seed`]).
    pub fn worker(&self, role: Role, sample: u32) -> PathBuf {
        layout_file(&self.get(role).target, Linked::Worker, sample)
    }

    /// `role`'s kernel library as sample `sample` loads it.
    pub fn library(&self, role: Role, sample: u32) -> PathBuf {
        layout_file(&self.get(role).target, Linked::Kernels, sample)
    }

    /// The harness that loads both trees' libraries (the current tree's build).
    pub fn harness(&self) -> PathBuf {
        self.current.target.join("release/paired")
    }

    /// Links every layout the given slots need, in both trees: of the worker for slots that run
    /// alone, of the kernel library for slots `in_process` pairs in one process.
    /// The run is told by its `nonce`, which draws its layouts ([`layout_seed`]).
    pub fn link_layouts(&self, slots: &[Slot], nonce: &str, in_process: impl Fn(&str) -> bool) -> Result<(), Failure> {
        let samples: BTreeSet<(u32, Linked)> =
            slots.iter().map(|s| (s.sample, if in_process(&s.implementation) { Linked::Kernels } else { Linked::Worker })).collect();
        // Layouts linked earlier in this invocation are reused, not relinked.
        let new = |role: Role| -> Vec<Layout> {
            samples
                .iter()
                .map(|&(sample, linked)| Layout { sample, seed: layout_seed(nonce, role, sample), linked })
                .filter(|l| !self.linked.borrow().contains(&(role, l.seed, l.linked)))
                .collect()
        };
        let new: Vec<(Role, Vec<Layout>)> = self.roles().into_iter().map(|role| (role, new(role))).filter(|(_, n)| !n.is_empty()).collect();
        let Some((_, some)) = new.first() else {
            return Ok(());
        };
        let count = |kind: Linked| some.iter().filter(|l| l.linked == kind).count();
        eprintln!("linking {} worker and {} kernel-library code layout(s) per tree…", count(Linked::Worker), count(Linked::Kernels));
        let started = std::time::Instant::now();
        // Each tree links in a thread of its own: two target folders, two cargo locks, and
        // nothing is being measured meanwhile (linking is most of what a further look costs).
        let links: Vec<Result<(), Failure>> = std::thread::scope(|scope| {
            let threads: Vec<_> = new
                .iter()
                .map(|(role, layouts)| {
                    let (role, built) = (*role, self.get(*role));
                    scope.spawn(move || {
                        let tree = Path::new(&built.info.path);
                        layouts.iter().try_for_each(|layout| link_layout(tree, &built.target, built.build, role, *layout))
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err(environment("a linking thread panicked")))).collect()
        });
        links.into_iter().collect::<Result<(), Failure>>()?;
        eprintln!("linked in {:.1} s", started.elapsed().as_secs_f64());
        for (role, layouts) in &new {
            self.linked.borrow_mut().extend(layouts.iter().map(|l| (*role, l.seed, l.linked)));
        }
        Ok(())
    }
}

impl Drop for Trees {
    /// The objects rustc kept for replaying its linker commands are needed only while this
    /// invocation links: gone with the trees (a calibration drops all of its trees at its end).
    fn drop(&mut self) {
        let mut commands = LINK_COMMANDS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let targets: Vec<PathBuf> = self.roles().into_iter().map(|role| self.get(role).target.clone()).collect();
        commands.retain(|(target, _), command| {
            let ours = targets.contains(target);
            if let Some(folder) = command.as_ref().filter(|_| ours).and_then(LinkCommand::temporary_folder) {
                let _ = std::fs::remove_dir_all(folder);
            }
            !ours
        });
    }
}

/// The code layout sample `sample` of `role`'s tree runs with in the run told by `nonce`: a
/// draw of its own for every tree, sample and run (never 0, which would ask LLD for a random
/// one and leave no record). The run's plan keeps the nonce, so its layouts can be linked
/// again.
///
/// Why not the same layout in both trees, as before: an A/A pair then compared two identical
/// binaries, whose layout luck cancels in the ratio, while any real change moves code and meets
/// an independent draw on each side. A/A runs and calibrations then promised what a change
/// cannot get: on the string and bytes lanes (A/A, six rounds, 68 comparisons), 52 gated at 3%
/// with one layout for both trees, 38 when the libraries differed only by code the kernels never
/// call; `json-td` encode of `string-64k` took 22 µs in one layout and 32 µs in another, in
/// every process. And why a draw per run: a calibration's runs would otherwise share their
/// layout luck, and agree more than runs of a real change do.
pub fn layout_seed(nonce: &str, role: Role, sample: u32) -> u32 {
    let base = nonce.get(..8).and_then(|hex| u32::from_str_radix(hex, 16).ok()).unwrap_or(0);
    let draw = u64::from(base) + 2 * u64::from(sample) + u64::from(role == Role::Current);
    (draw % u64::from(u32::MAX)) as u32 + 1
}

/// Where a tree keeps the layout a sample runs with, named by sample: every run links its
/// own there, so layouts do not pile up (one is some 40 MB).
fn layout_file(target: &Path, linked: Linked, sample: u32) -> PathBuf {
    let name = match linked {
        Linked::Worker => "worker",
        Linked::Kernels => library::FILE_NAME,
    };
    target.join(format!("layouts/{name}-{}", sample + 1))
}

/// One layout to link: which sample runs it, with what seed, of which binary.
#[derive(Debug, Clone, Copy)]
struct Layout {
    sample: u32,
    seed: u32,
    linked: Linked,
}

/// Builds the tree's worker and reads its catalog.
///
/// Each tree builds into its own target folder. Both builds remap their source and target
/// folders to the same names: otherwise the paths embedded in the binary (panic locations,
/// generated files) differ in length, the linker shifts every function, and two builds of the
/// same commit measure differently — a false alarm in every A/A run (seen: a 13% gap on
/// `clone`, from a 64-byte shift).
///
/// With `kernels`, also the tree's kernel library, and in the current tree the harness that
/// loads two of them; a baseline older than the library is told apart from one whose library
/// does not build. With `counter`, also the tree's counter, which a baseline older than
/// counting lacks.
pub fn build(
    mut info: TreeInfo,
    target: PathBuf,
    role: Role,
    build: Build,
    ci: bool,
    kernels: bool,
    counter: bool,
) -> Result<Built, Failure> {
    let tree = PathBuf::from(&info.path);
    info.build = Some(build);
    eprintln!("building the {role} tree's worker ({}; a first build takes a few minutes)…", build.as_str());
    let has_counter = tree.join("src/bin/counter.rs").exists();
    let mut bins = vec!["build", "--release", "--bin", "worker"];
    if kernels && role == Role::Current {
        bins.extend(["--bin", "paired"]);
    }
    if counter && has_counter {
        bins.extend(["--bin", "counter"]);
    }
    let status = cargo(&tree, &target, build, &bins, ci)?;
    if !status.success() {
        let why = if !tree.join("src/bin/worker.rs").exists() {
            format!("the {role} tree ({}) has no worker: it is older than the runner; pick a later --baseline", tree.display())
        } else {
            format!("the {role} tree ({}) does not compile: cargo's errors are above; nothing was measured", tree.display())
        };
        return Err(environment(why));
    }
    let catalog = listed(&target.join("release/worker"), &tree)?;
    let kernels = if !kernels {
        Err("not asked for".into())
    } else if !tree.join("kernels/Cargo.toml").exists() {
        Err(format!(
            "the {role} tree ({}) predates in-process pairing: it has no kernel library",
            &info.commit[..10.min(info.commit.len())]
        ))
    } else {
        eprintln!("building the {role} tree's kernel library…");
        match cargo(&tree, &target, build, &["build", "--release", "-p", "tdbench-kernels"], ci)?.success() {
            true => Ok(()),
            false if role == Role::Current => {
                return Err(environment(format!("the {role} tree's kernel library (kernels/) does not compile: cargo's errors are above")));
            }
            false => Err(format!("the {role} tree's kernel library does not build (cargo's errors are above)")),
        }
    };
    let counter = match (counter, has_counter) {
        (false, _) => Err("not asked for".into()),
        (true, true) => Ok(()),
        (true, false) => {
            Err(format!("the {role} tree ({}) predates counting: it has no counter", &info.commit[..10.min(info.commit.len())]))
        }
    };
    Ok(Built { info, target, catalog, kernels, counter, build })
}

/// cargo in `tree`, building into `target` as `build` says, with both trees' paths remapped to
/// the same names.
pub(super) fn cargo(tree: &Path, target: &Path, build: Build, args: &[&str], quiet: bool) -> Result<std::process::ExitStatus, Failure> {
    cargo_command(tree, target, build, args, quiet).status().map_err(|e| environment(format!("cannot run cargo: {e}")))
}

fn cargo_command(tree: &Path, target: &Path, build: Build, args: &[&str], quiet: bool) -> Command {
    let mut flags: Vec<String> = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .ok()
        .filter(|f| !f.is_empty())
        .map(|f| f.split('\x1f').map(String::from).collect())
        .unwrap_or_default();
    // rustc applies the last matching prefix: the target folder (inside the baseline worktree,
    // not inside the current tree's layout) must come after the tree, or its paths would map
    // to two different names in the two trees.
    flags.push(format!("--remap-path-prefix={}=/tdbench/tree", tree.display()));
    flags.push(format!("--remap-path-prefix={}=/tdbench/target", target.display()));
    let mut command = Command::new("cargo");
    // `--quiet` belongs to cargo's subcommand, before any `--` that starts rustc's arguments.
    command.arg(args[0]);
    if quiet {
        command.arg("--quiet");
    }
    command
        .args(&args[1..])
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env_remove("RUSTFLAGS");
    // The measurement build overrides the tree's own release profile; the other build takes it
    // as the tree has it, untouched by anything in the runner's own environment.
    for (key, value) in MEASUREMENT_PROFILE {
        match build {
            Build::Measurement => command.env(key, value),
            Build::CargoDefault => command.env_remove(key),
        };
    }
    command
}

/// What [`link_layout`] links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Linked {
    Worker,
    Kernels,
}

/// Links the tree's worker (or kernel library) with its functions in an order shuffled by the
/// layout's seed (LLD's `--shuffle-sections`), into its sample's file ([`layout_file`]).
///
/// Why: any change moves the code after it, and where a hot loop lands (alignment, cache sets,
/// branch-predictor aliasing) can move unchanged code by several percent — seen here: adding
/// work to msgpack's decode made bincode's and tl's decode 2–3% slower in every process. With a
/// layout drawn for every process and tree ([`layout_seed`]), layout luck is noise the intervals
/// account for, in an A/A run as in a real change, instead of a bias that fails unrelated code.
///
/// The first layout of each binary in an invocation goes through cargo, always with seed
/// [`CAPTURE_SEED`] (so both trees' `release/` builds stay byte-identical), and captures the
/// linker command; every layout is then a replay of it ([`LinkCommand`]): about 0.25 s each
/// instead of 2.
fn link_layout(tree: &Path, target: &Path, build: Build, role: Role, layout: Layout) -> Result<(), Failure> {
    let Layout { seed, linked, .. } = layout;
    let (what, built): (&[&str], &str) = match linked {
        Linked::Worker => (&["--bin", "worker"], "worker"),
        Linked::Kernels => (&["-p", "tdbench-kernels", "--lib"], library::FILE_NAME),
    };
    let output = layout_file(target, linked, layout.sample);
    let layouts = output.parent().expect("layout files are in a folder").to_path_buf();
    std::fs::create_dir_all(&layouts).map_err(|e| environment(e.to_string()))?;
    let failed = |why: String| environment(format!("linking the {role} {built} with layout {seed}: {why}"));
    let key = (target.to_path_buf(), linked);
    let captured = LINK_COMMANDS.lock().expect("no linking thread panics holding the lock").get(&key).cloned();
    let command = match captured {
        Some(command) => command,
        None => {
            let shuffle = format!("link-arg=-Wl,--shuffle-sections=.text*={CAPTURE_SEED}");
            let args: Vec<&str> = ["rustc", "--release"]
                .iter()
                .chain(what)
                .chain(&["--", "-C", &shuffle, "-C", "save-temps", "--print", "link-args"])
                .copied()
                .collect();
            let printed = cargo_printing(tree, target, build, &args)?.ok_or_else(|| failed("cargo failed".into()))?;
            let linked_by_cargo = target.join("release").join(built);
            let command = LinkCommand::parse(&printed).filter(|c| replays(c, &linked_by_cargo, &layouts));
            LINK_COMMANDS.lock().expect("no linking thread panics holding the lock").insert(key, command.clone());
            command
        }
    };
    if let Some(command) = command {
        return command.link(seed, &output).map_err(failed);
    }
    // Replaying is off: cargo links this layout (and relinks the crate, about 2 s).
    let shuffle = format!("link-arg=-Wl,--shuffle-sections=.text*={seed}");
    let args: Vec<&str> = ["rustc", "--release"].iter().chain(what).chain(&["--", "-C", &shuffle]).copied().collect();
    if !cargo(tree, target, build, &args, true)?.success() {
        return Err(failed("cargo failed".into()));
    }
    keep(target, built, &output, seed)
}

/// The seed of the layout cargo links when a linker command is captured.
const CAPTURE_SEED: u32 = 1;

/// Copies what cargo just linked into `output`.
fn keep(target: &Path, built: &str, output: &Path, seed: u32) -> Result<(), Failure> {
    std::fs::copy(target.join("release").join(built), output).map_err(|e| environment(format!("cannot keep layout {seed}: {e}")))?;
    Ok(())
}

/// Whether replaying `command` with [`CAPTURE_SEED`] gives exactly what cargo linked with it:
/// only then are layouts linked by replaying it.
fn replays(command: &LinkCommand, linked_by_cargo: &Path, layouts: &Path) -> bool {
    let check = layouts.join(format!(".replay-check-{CAPTURE_SEED}"));
    let same = command.link(CAPTURE_SEED, &check).is_ok() && std::fs::read(&check).ok() == std::fs::read(linked_by_cargo).ok();
    let _ = std::fs::remove_file(&check);
    same
}

/// cargo as [`cargo`] does it, keeping what rustc prints on standard output (`--print`);
/// `None` when cargo fails (its errors go to standard error).
fn cargo_printing(tree: &Path, target: &Path, build: Build, args: &[&str]) -> Result<Option<String>, Failure> {
    let mut command = cargo_command(tree, target, build, args, true);
    let output = command.stdout(Stdio::piped()).stderr(Stdio::inherit()).output();
    let output = output.map_err(|e| environment(format!("cannot run cargo: {e}")))?;
    Ok(output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned()))
}

/// What a worker binary can measure (`worker --list`), asked in its tree.
pub(super) fn listed(worker: &Path, tree: &Path) -> Result<Catalog, Failure> {
    let output = Command::new(worker)
        .arg("--list")
        .current_dir(tree)
        .output()
        .map_err(|e| environment(format!("cannot run {}: {e}", worker.display())))?;
    Catalog::parse(&output.stdout).map_err(|e| environment(format!("{}: {e}", worker.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tree_sample_and_run_draws_a_layout_of_its_own() {
        // A nonce as runs draw them, the ones that wrap around, and one that is not hex.
        for nonce in ["d27cbd30b83b01b4", "fffffffe00000000", "ffffffff00000000", "00000000ffffffff", "not hex"] {
            let mut seeds = HashSet::new();
            for sample in 0..40 {
                for role in [Role::Baseline, Role::Current] {
                    let seed = layout_seed(nonce, role, sample);
                    assert_ne!(seed, 0, "0 asks LLD for a random layout");
                    assert_eq!(seed, layout_seed(nonce, role, sample), "a run's layouts can be linked again");
                    seeds.insert(seed);
                }
            }
            assert_eq!(seeds.len(), 80, "{nonce}: two trees or samples of one run share a layout");
        }
        let (one, other) = (layout_seed("d27cbd30b83b01b4", Role::Current, 3), layout_seed("9a0c5e11b83b01b4", Role::Current, 3));
        assert_ne!(one, other, "two runs share a layout");
    }
}
