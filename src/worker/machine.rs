//! What the worker says about where it ran, so the merger can refuse to compare samples from
//! different machines, compilers or settings.

use tdbench_contract::Machine;

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

/// The commit of the tree this binary was built from, and whether it has uncommitted changes.
pub fn tree_state(tree: &std::path::Path) -> (String, bool) {
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
    let dirty = git(&["status", "--porcelain"]).is_none_or(|s| !s.is_empty());
    (commit, dirty)
}
