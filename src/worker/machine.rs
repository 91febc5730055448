//! What the worker says about where it ran, so the merger can refuse to compare samples from
//! different machines, compilers or settings.

use tdbench_contract::{Machine, Role, TreeState};

/// This machine, and the compiler, target and profile this binary was built with.
pub fn current() -> Machine {
    Machine {
        cpu: cpu_model(),
        os: os_name(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        rustc: env!("TDBENCH_RUSTC").to_string(),
        target: env!("TDBENCH_TARGET").to_string(),
        profile: env!("TDBENCH_PROFILE").to_string(),
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn os_name() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string())));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|k| k.trim().to_string());
    match (pretty, kernel) {
        (Some(p), Some(k)) => format!("{p}, Linux {k}"),
        (Some(p), None) => p,
        (None, Some(k)) => format!("Linux {k}"),
        (None, None) => std::env::consts::OS.to_string(),
    }
}

/// The commit of the tree this binary was built from, and whether its tracked files have
/// uncommitted changes: as the runner recorded it in the plan and handed it over
/// ([`TreeState`]), so a checkout edited while a run goes on changes nothing. Started by hand
/// (a failed sample's "reproduce with" line lacks the variable), the process reads the tree.
pub fn tree_state(tree: &std::path::Path, role: Role) -> (String, bool) {
    if let Some(state) = TreeState::from_environment(role) {
        return (state.commit, state.dirty);
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(tree)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_none_or(|s| !s.is_empty());
    (commit, dirty)
}
