//! A progress line with an ETA on a terminal; a plain line every few workers under `--ci`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

pub struct Progress {
    total: usize,
    done: usize,
    spent: Duration,
    interactive: bool,
}

impl Progress {
    pub fn new(total: usize, ci: bool) -> Progress {
        Progress { total, done: 0, spent: Duration::ZERO, interactive: !ci && std::io::stderr().is_terminal() }
    }

    pub fn step(&mut self, lane: &str, took: Duration) {
        self.done += 1;
        self.spent += took;
        let eta = self.spent.as_secs_f64() / self.done as f64 * (self.total - self.done) as f64;
        let line = format!("[{lane}] {}/{} workers, ETA {}:{:02}", self.done, self.total, eta as u64 / 60, eta as u64 % 60);
        if self.interactive {
            eprint!("\r\x1b[K{line}");
            let _ = std::io::stderr().flush();
        } else if self.done.is_multiple_of(20) || self.done == self.total {
            eprintln!("{line}");
        }
    }

    pub fn finish(&mut self) {
        if self.interactive && self.done > 0 {
            eprintln!();
            self.done = 0;
        }
    }
}
