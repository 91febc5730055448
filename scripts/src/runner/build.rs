//! Building each tree's worker, linking its code layouts, and asking it what it can measure.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use tdbench_contract::{Catalog, Role, library};

use super::relink::LinkCommand;
use super::{Failure, environment};
use crate::plan::{Slot, TreeInfo};

/// A tree, where it builds, and what its worker says it can measure.
pub struct Built {
    pub info: TreeInfo,
    /// The target folder the tree builds into.
    pub target: PathBuf,
    pub catalog: Catalog,
    /// The tree's kernel library for in-process pairs (`kernels/`), or why it has none.
    pub kernels: Result<(), String>,
}

pub struct Trees {
    pub current: Built,
    pub baseline: Option<Built>,
    /// Layouts linked by this invocation (role, seed, what): a calibration's runs reuse them.
    pub linked: RefCell<HashSet<(Role, u32, Linked)>>,
    /// Per tree and binary, the linker command captured by its first layout in this
    /// invocation (`None`: replaying is off, every layout goes through cargo).
    pub link_commands: Mutex<HashMap<(Role, Linked), Option<LinkCommand>>>,
}

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

    /// The worker of `role`'s tree linked with code layout `seed` (see [`link_layout`]).
    pub fn worker(&self, role: Role, seed: u32) -> PathBuf {
        self.get(role).target.join(format!("layouts/worker-{seed}"))
    }

    /// `role`'s kernel library linked with code layout `seed`.
    pub fn library(&self, role: Role, seed: u32) -> PathBuf {
        self.get(role).target.join(format!("layouts/{}-{seed}", library::FILE_NAME))
    }

    /// The harness that loads both trees' libraries (the current tree's build).
    pub fn harness(&self) -> PathBuf {
        self.current.target.join("release/paired")
    }

    /// Links every layout the given slots need, in both trees: of the worker for slots that run
    /// alone, of the kernel library for slots `in_process` pairs in one process.
    pub fn link_layouts(&self, slots: &[Slot], in_process: impl Fn(&str) -> bool) -> Result<(), Failure> {
        let seeds = |paired: bool| -> BTreeSet<u32> {
            slots.iter().filter(|s| in_process(&s.implementation) == paired).map(|s| layout_seed(s.sample)).collect()
        };
        let (workers, libraries) = (seeds(false), seeds(true));
        let wanted: Vec<(u32, Linked)> =
            workers.iter().map(|&s| (s, Linked::Worker)).chain(libraries.iter().map(|&s| (s, Linked::Kernels))).collect();
        // Layouts linked earlier in this invocation are reused, not relinked.
        let new: Vec<(u32, Linked)> =
            wanted.into_iter().filter(|(seed, linked)| !self.linked.borrow().contains(&(Role::Current, *seed, *linked))).collect();
        if new.is_empty() {
            return Ok(());
        }
        let count = |kind: Linked| new.iter().filter(|(_, linked)| *linked == kind).count();
        eprintln!("linking {} worker and {} kernel-library code layout(s) per tree…", count(Linked::Worker), count(Linked::Kernels));
        let started = std::time::Instant::now();
        // Each tree links in a thread of its own: two target folders, two cargo locks, and
        // nothing is being measured meanwhile (linking is most of what a further look costs).
        let links: Vec<Result<(), Failure>> = std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .roles()
                .into_iter()
                .map(|role| {
                    let (built, new, commands) = (self.get(role), &new, &self.link_commands);
                    scope.spawn(move || {
                        let tree = Path::new(&built.info.path);
                        new.iter().try_for_each(|&(seed, linked)| link_layout(tree, &built.target, role, seed, linked, commands))
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err(environment("a linking thread panicked")))).collect()
        });
        links.into_iter().collect::<Result<(), Failure>>()?;
        eprintln!("linked in {:.1} s", started.elapsed().as_secs_f64());
        for role in self.roles() {
            self.linked.borrow_mut().extend(new.iter().map(|&(seed, linked)| (role, seed, linked)));
        }
        Ok(())
    }
}

impl Drop for Trees {
    /// The objects rustc kept for replaying its linker command are needed only while this
    /// invocation links.
    fn drop(&mut self) {
        let commands = self.link_commands.get_mut().map(std::mem::take).unwrap_or_default();
        for folder in commands.values().flatten().filter_map(LinkCommand::temporary_folder) {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}

/// Sample `k` of both trees runs with layout seed `k + 1` (0 would ask LLD for a random one).
pub fn layout_seed(sample: u32) -> u32 {
    sample + 1
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
/// does not build.
pub fn build(info: TreeInfo, target: PathBuf, role: Role, ci: bool, kernels: bool) -> Result<Built, Failure> {
    let tree = PathBuf::from(&info.path);
    eprintln!("building the {role} tree's worker (release; a first build takes a few minutes)…");
    let mut bins = vec!["build", "--release", "--bin", "worker"];
    if kernels && role == Role::Current {
        bins.extend(["--bin", "paired"]);
    }
    let status = cargo(&tree, &target, &bins, ci)?;
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
        match cargo(&tree, &target, &["build", "--release", "-p", "tdbench-kernels"], ci)?.success() {
            true => Ok(()),
            false if role == Role::Current => {
                return Err(environment(format!("the {role} tree's kernel library (kernels/) does not compile: cargo's errors are above")));
            }
            false => Err(format!("the {role} tree's kernel library does not build (cargo's errors are above)")),
        }
    };
    Ok(Built { info, target, catalog, kernels })
}

/// cargo in `tree`, building into `target`, with both trees' paths remapped to the same names.
pub(super) fn cargo(tree: &Path, target: &Path, args: &[&str], quiet: bool) -> Result<std::process::ExitStatus, Failure> {
    cargo_command(tree, target, args, quiet).status().map_err(|e| environment(format!("cannot run cargo: {e}")))
}

fn cargo_command(tree: &Path, target: &Path, args: &[&str], quiet: bool) -> Command {
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
    command
}

/// What [`link_layout`] links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Linked {
    Worker,
    Kernels,
}

/// Links the tree's worker (or kernel library) with its functions in an order shuffled by
/// `seed` (LLD's `--shuffle-sections`), into `layouts/worker-SEED` (or the library's name with
/// `-SEED`).
///
/// Why: any change moves the code after it, and where a hot loop lands (alignment, cache sets,
/// branch-predictor aliasing) can move unchanged code by several percent — seen here: adding
/// work to msgpack's decode made bincode's and tl's decode 2–3% slower in every process. With
/// one layout per sample, the same for both trees, an A/A pair is still two identical binaries,
/// while a real change meets a different layout draw in every pair: layout luck becomes noise
/// the intervals account for instead of a bias that fails unrelated code.
///
/// The first layout of each binary in an invocation goes through cargo and captures the linker
/// command; the others replay it ([`LinkCommand`]): about 0.25 s each instead of 2.
fn link_layout(
    tree: &Path,
    target: &Path,
    role: Role,
    seed: u32,
    linked: Linked,
    commands: &Mutex<HashMap<(Role, Linked), Option<LinkCommand>>>,
) -> Result<(), Failure> {
    let (what, built, kept): (&[&str], &str, String) = match linked {
        Linked::Worker => (&["--bin", "worker"], "worker", format!("worker-{seed}")),
        Linked::Kernels => (&["-p", "tdbench-kernels", "--lib"], library::FILE_NAME, format!("{}-{seed}", library::FILE_NAME)),
    };
    let layouts = target.join("layouts");
    std::fs::create_dir_all(&layouts).map_err(|e| environment(e.to_string()))?;
    let output = layouts.join(&kept);
    let captured = commands.lock().expect("no linking thread panics holding the lock").get(&(role, linked)).cloned();
    match captured {
        Some(Some(command)) => {
            return command.link(seed, &output).map_err(|e| environment(format!("linking the {role} {built} with layout {seed}: {e}")));
        }
        Some(None) => {}
        None => {
            let shuffle = format!("link-arg=-Wl,--shuffle-sections=.text*={seed}");
            let args: Vec<&str> = ["rustc", "--release"]
                .iter()
                .chain(what)
                .chain(&["--", "-C", &shuffle, "-C", "save-temps", "--print", "link-args"])
                .copied()
                .collect();
            let printed = cargo_printing(tree, target, &args)?;
            keep(target, built, &output, seed)?;
            let command = printed.as_deref().and_then(LinkCommand::parse).filter(|c| replays(c, seed, &output, &layouts));
            commands.lock().expect("no linking thread panics holding the lock").insert((role, linked), command);
            return match printed {
                Some(_) => Ok(()),
                None => Err(environment(format!("linking the {role} {built} with layout {seed} failed"))),
            };
        }
    }
    let shuffle = format!("link-arg=-Wl,--shuffle-sections=.text*={seed}");
    let args: Vec<&str> = ["rustc", "--release"].iter().chain(what).chain(&["--", "-C", &shuffle]).copied().collect();
    if !cargo(tree, target, &args, true)?.success() {
        return Err(environment(format!("linking the {role} {built} with layout {seed} failed")));
    }
    keep(target, built, &output, seed)
}

/// Copies what cargo just linked into `output`.
fn keep(target: &Path, built: &str, output: &Path, seed: u32) -> Result<(), Failure> {
    std::fs::copy(target.join("release").join(built), output).map_err(|e| environment(format!("cannot keep layout {seed}: {e}")))?;
    Ok(())
}

/// Whether replaying `command` with `seed` gives exactly the layout cargo linked: only then are
/// the other layouts linked by replaying it.
fn replays(command: &LinkCommand, seed: u32, linked: &Path, layouts: &Path) -> bool {
    let check = layouts.join(format!(".replay-check-{seed}"));
    let same = command.link(seed, &check).is_ok() && std::fs::read(&check).ok() == std::fs::read(linked).ok();
    let _ = std::fs::remove_file(&check);
    same
}

/// cargo as [`cargo`] does it, keeping what rustc prints on standard output (`--print`);
/// `None` when cargo fails (its errors go to standard error).
fn cargo_printing(tree: &Path, target: &Path, args: &[&str]) -> Result<Option<String>, Failure> {
    let mut command = cargo_command(tree, target, args, true);
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
