//! What an app does with what it decodes: keeps it. [`store::Store`] applies the start-up
//! stream's updates the way a client does, so the in-app measurement (`worker::in_app`) times a
//! decode together with the allocation, storing and replacing that no reader can remove.

pub mod store;
