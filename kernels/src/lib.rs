//! One tree's kernels — the worker's own [`tdbench::worker::Kernel`]s, validated the same way —
//! behind the C ABI of [`tdbench_contract::library`], so the `paired` harness can load the
//! baseline's and the current tree's builds into one process and alternate batches between
//! them: drift, frequency changes and neighbours then hit both sides alike.
//!
//! Each library carries its own copy of std and its own counting allocator, so an allocation
//! count taken here counts this tree's code only, exactly as a process of its own would.
//! TDLib round trips open a libtdjson client of their own (`TDJSON` names the library, as for a
//! worker): the two trees' clients share the one TDLib of the process, its threads and their
//! sleep and wake-ups, which is what pairing wants — whatever TDLib's state does to a round
//! trip, it does to both sides' batches alike. [`tdbench_kernels_close`] closes the client
//! before the process exits, as TDLib requires.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::path::Path;

use tdbench::alloc::CountingAllocator;
use tdbench::corpus::Corpus;
use tdbench::registry;
use tdbench::tdlib::{Client, HOW_TO_ENABLE, Tdjson};
use tdbench::worker::{self, Kernel, measured_loop};
use tdbench_contract::library::{self, KernelInfo, Opening};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// An open lane: its kernels and where each one's cycle stands.
pub struct Session {
    kernels: Vec<Kernel<'static>>,
    cursors: Vec<usize>,
    buffers: Vec<Vec<u8>>,
    description: library::Session,
    /// A TDLib round trip's client, closed by [`tdbench_kernels_close`].
    client: Option<&'static RefCell<Client<'static>>>,
}

fn open(opening: &str) -> Result<Session, String> {
    let opening: Opening = serde_json::from_str(opening).map_err(|e| format!("unreadable opening: {e}"))?;
    let implementation = registry::implementation(&opening.implementation)?;
    worker::check_measures(implementation, &opening.lane)?;
    let (corpus, lane) = worker::load_lane(&opening.lane, Path::new(&opening.corpus_dir), true)?;
    // The session lives until the process ends; its kernels borrow the corpus. So does
    // libtdjson: its threads must never outlive the library.
    let corpus: &'static Corpus = Box::leak(Box::new(corpus));
    let client: Option<&'static RefCell<Client<'static>>> = match implementation.needs_tdlib() {
        true => {
            let tdjson: &'static Tdjson = Box::leak(Box::new(Tdjson::load()?.ok_or(HOW_TO_ENABLE)?));
            tdjson.check_version_for_round_trips()?;
            Some(Box::leak(Box::new(RefCell::new(tdjson.client()))))
        }
        false => None,
    };
    let kernels = match checked_kernels(implementation, &corpus.lane(lane), client, &opening) {
        Ok(kernels) => kernels,
        Err(e) => {
            // A live client must be closed before the process exits, or TDLib aborts it.
            if let Some(client) = client {
                client.borrow_mut().shut_down();
            }
            return Err(e);
        }
    };
    let description = library::Session {
        corpus: worker::corpus_summary(corpus, lane),
        kernels: kernels
            .iter()
            .map(|k| {
                let worker::Produced { proof, encoded_bytes, compressed } = worker::proof(k);
                KernelInfo {
                    operation: k.operation(),
                    cycle: k.batch_unit(),
                    proof,
                    encoded_bytes,
                    compressed,
                    keeps: k.keeps().then_some(k.len() as u64),
                }
            })
            .collect(),
    };
    Ok(Session {
        cursors: vec![0; kernels.len()],
        buffers: kernels.iter().map(|_| worker::placement::output_buffer()).collect(),
        kernels,
        description,
        client,
    })
}

/// The implementation's kernels on the lane, TDLib's echoes checked, the operation asked for kept.
fn checked_kernels(
    implementation: registry::Implementation,
    payloads: &[&'static tdbench::corpus::Payload],
    client: Option<&'static RefCell<Client<'static>>>,
    opening: &Opening,
) -> Result<Vec<Kernel<'static>>, String> {
    let keep = tdbench::corpus::lanes::lane(&opening.lane).is_some_and(|l| l.stream);
    let mut kernels = worker::kernels(implementation, payloads, client, keep)?;
    worker::check_round_trips(&kernels, &mut Vec::new())?;
    worker::select_operation(&mut kernels, opening.operation, &opening.implementation)?;
    Ok(kernels)
}

fn into_c(text: String) -> *mut c_char {
    CString::new(text.replace('\0', " ")).expect("no NUL left").into_raw()
}

#[unsafe(no_mangle)]
pub extern "C" fn tdbench_kernels_version() -> u32 {
    library::VERSION
}

/// # Safety
/// `opening` is a NUL-terminated string; `error` points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_open(opening: *const c_char, error: *mut *mut c_char) -> *mut Session {
    if opening.is_null() || error.is_null() {
        return std::ptr::null_mut();
    }
    // A panic while opening (a bug, a corpus it cannot read) is an error the harness can name,
    // not an abort at the boundary.
    let opened = match unsafe { CStr::from_ptr(opening) }.to_str() {
        Ok(text) => std::panic::catch_unwind(|| open(text)).unwrap_or_else(|panic| {
            let message = panic.downcast_ref::<&str>().map(|m| m.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
            Err(format!("the library panicked while opening: {}", message.unwrap_or_default()))
        }),
        Err(_) => Err("the opening is not UTF-8".into()),
    };
    match opened {
        Ok(session) => Box::into_raw(Box::new(session)),
        Err(message) => {
            unsafe { *error = into_c(message) };
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `session` came from `tdbench_kernels_open` of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_describe(session: *const Session) -> *mut c_char {
    let session = unsafe { &*session };
    into_c(serde_json::to_string(&session.description).expect("the description serializes"))
}

/// # Safety
/// `session` came from `tdbench_kernels_open` of this library; `kernel` is one of its kernels.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_run(session: *mut Session, kernel: u32, n: u64) {
    let session = unsafe { &mut *session };
    let k = kernel as usize;
    let (kernel, cursor, buffer) = (&session.kernels[k], &mut session.cursors[k], &mut session.buffers[k]);
    measured_loop(kernel, n, cursor, buffer);
}

/// # Safety
/// As [`tdbench_kernels_run`]; `counts` points to two writable `u64`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_count_allocations(session: *mut Session, kernel: u32, n: u64, counts: *mut [u64; 2]) {
    let session = unsafe { &mut *session };
    let k = kernel as usize;
    // From the first payload (a store kernel: from an empty store), as the worker's allocation
    // pass: the same count in every process.
    session.kernels[k].empty_store();
    let mut cursor = 0;
    let ((), measured) = tdbench::alloc::measure(|| measured_loop(&session.kernels[k], n, &mut cursor, &mut session.buffers[k]));
    unsafe { *counts = [measured.allocations, measured.bytes] };
}

/// # Safety
/// `session` came from `tdbench_kernels_open` of this library and is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_close(session: *mut Session) {
    let session = unsafe { Box::from_raw(session) };
    if let Some(client) = session.client {
        client.borrow_mut().shut_down();
    }
}

/// # Safety
/// `text` came from this library and is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tdbench_kernels_free(text: *mut c_char) {
    if !text.is_null() {
        drop(unsafe { CString::from_raw(text) });
    }
}
