//! Records what the worker reports about its own build: compiler, target and profile.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TDBENCH_RUSTC={version}");
    println!("cargo:rustc-env=TDBENCH_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    println!("cargo:rustc-env=TDBENCH_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rerun-if-changed=build.rs");
}
