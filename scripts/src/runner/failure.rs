//! How a run ends early, shared by every step of the runner.

/// A failure that ends the run: exit 1 for a failed worker, 2 for usage and environment.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

/// A usage or environment failure (exit 2).
pub(super) fn environment(message: impl Into<String>) -> Failure {
    Failure { code: 2, message: message.into() }
}
