//! TDLib's own JSON interface, `libtdjson`, loaded at run time (building never needs it), as the
//! judge of our JSON: its test methods echo a value through TDLib's parser and serializer with
//! no account and no network.
//!
//! `TDJSON=/path/to/libtdjson.so` wins; otherwise `.cache/tdjson/libtdjson.so`, which
//! `scripts/install-tdjson.sh` takes from the PyPI package python-telegram 2.0.0 (TDLib 1.8.66).

use std::ffi::{CStr, CString, c_char, c_double, c_int};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tdbench_models::Object;

use crate::Codec;
use crate::codecs::json::{Json, TdlibFormatter};

/// The TDLib version `models/schema/td_api.tl` was taken from.
pub const SCHEMA_TDLIB_VERSION: &str = "1.8.66";

/// Set (to anything) to measure round trips with a libtdjson of another TDLib version.
pub const ANY_TDLIB_VERSION: &str = "TDBENCH_ANY_TDLIB_VERSION";

/// What to print when TDLib is not there.
pub const HOW_TO_ENABLE: &str =
    "libtdjson not found: install it with `bash scripts/install-tdjson.sh`, or point TDJSON=/path/to/libtdjson.so at a build of TDLib";

type CreateClientId = unsafe extern "C" fn() -> c_int;
type Send = unsafe extern "C" fn(c_int, *const c_char);
type Receive = unsafe extern "C" fn(c_double) -> *const c_char;
type Execute = unsafe extern "C" fn(*const c_char) -> *const c_char;

/// A loaded `libtdjson`.
pub struct Tdjson {
    create_client_id: CreateClientId,
    send: Send,
    receive: Receive,
    execute: Execute,
    // Keeps the functions above valid; declared last so it is dropped last.
    _library: libloading::Library,
}

impl Tdjson {
    /// Where the library is expected: `$TDJSON`, else `.cache/tdjson/` of the tree the process
    /// runs in (the runner starts workers in their tree and names the library explicitly;
    /// `cargo test` runs in the repository root). Never a path fixed at build time: it would
    /// make two builds of one commit in two folders different binaries.
    pub fn path() -> PathBuf {
        std::env::var_os("TDJSON").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".cache/tdjson/libtdjson.so"))
    }

    /// `None` when there is no library at [`Tdjson::path`]; an error when there is one that
    /// does not load.
    pub fn load() -> Result<Option<Tdjson>, String> {
        let path = Self::path();
        if !path.exists() {
            return Ok(None);
        }
        // SAFETY: loading runs the library's initialisers; libtdjson's are TDLib's own and
        // have no preconditions. The symbols are TDLib's documented C interface
        // (td/telegram/td_json_client.h) with exactly these signatures.
        unsafe {
            let library = libloading::Library::new(&path).map_err(|e| format!("cannot load {}: {e}", path.display()))?;
            let symbol = |name: &[u8]| -> Result<*const (), String> {
                library
                    .get::<*const ()>(name)
                    .map(|s| *s)
                    .map_err(|e| format!("{}: no {}: {e}", path.display(), String::from_utf8_lossy(name)))
            };
            let td = Tdjson {
                create_client_id: std::mem::transmute::<*const (), CreateClientId>(symbol(b"td_create_client_id")?),
                send: std::mem::transmute::<*const (), Send>(symbol(b"td_send")?),
                receive: std::mem::transmute::<*const (), Receive>(symbol(b"td_receive")?),
                execute: std::mem::transmute::<*const (), Execute>(symbol(b"td_execute")?),
                _library: library,
            };
            td.execute(r#"{"@type":"setLogVerbosityLevel","new_verbosity_level":0}"#);
            Ok(Some(td))
        }
    }

    /// A synchronous request (`td_execute`); `None` if TDLib returned nothing.
    pub fn execute(&self, request: &str) -> Option<String> {
        let request = CString::new(request).ok()?;
        // SAFETY: the request is NUL-terminated and outlives the call; TDLib returns a string
        // it owns that stays valid until the next call on this thread, copied at once.
        unsafe {
            let answer = (self.execute)(request.as_ptr());
            (!answer.is_null()).then(|| String::from_utf8_lossy(CStr::from_ptr(answer).to_bytes()).into_owned())
        }
    }

    /// The version TDLib reports, e.g. `1.8.66`.
    pub fn version(&self) -> Option<String> {
        let answer = self.execute(r#"{"@type":"getOption","name":"version"}"#)?;
        let value: serde_json::Value = serde_json::from_str(&answer).ok()?;
        value["value"].as_str().map(String::from)
    }

    /// A note when the library is not the TDLib version of the schema.
    pub fn version_note(&self) -> Option<String> {
        match self.version() {
            Some(v) if v == SCHEMA_TDLIB_VERSION => None,
            Some(v) => Some(format!("libtdjson is TDLib {v}; the schema is from TDLib {SCHEMA_TDLIB_VERSION}")),
            None => Some("libtdjson did not report its version".into()),
        }
    }

    /// Round trips compare this library's output with the schema's TDLib: a library of another
    /// version is refused, unless the environment variable [`ANY_TDLIB_VERSION`] is set, on
    /// purpose (then it is a note).
    pub fn check_version_for_round_trips(&self) -> Result<Option<String>, String> {
        match self.version_note() {
            None => Ok(None),
            Some(note) if std::env::var_os(ANY_TDLIB_VERSION).is_some() => Ok(Some(format!("{note} ({ANY_TDLIB_VERSION} is set)"))),
            Some(note) => Err(format!(
                "{note}: its round trips would measure another TDLib against this schema; \
                 use `bash scripts/install-tdjson.sh`'s TDLib {SCHEMA_TDLIB_VERSION}, or set {ANY_TDLIB_VERSION}=1 to measure it on purpose"
            )),
        }
    }

    /// A new client. Only one thread may receive at a time (TDLib's rule for `td_receive`).
    pub fn client(&self) -> Client<'_> {
        // SAFETY: no preconditions.
        let id = unsafe { (self.create_client_id)() };
        Client { td: self, id, next_extra: 1, closed: false }
    }
}

/// One TDLib client, used for request/response round trips.
pub struct Client<'a> {
    td: &'a Tdjson,
    id: c_int,
    next_extra: u64,
    closed: bool,
}

impl Client<'_> {
    /// Sends `request` (a JSON object) with a fresh `@extra` and returns TDLib's answer to it
    /// exactly as received, skipping updates.
    pub fn call(&mut self, request: &str) -> Result<String, String> {
        let extra = self.next_extra();
        let body = request.strip_suffix('}').ok_or("a request is a JSON object")?;
        let tagged = CString::new(format!("{body},\"@extra\":{extra}}}")).map_err(|e| e.to_string())?;
        self.round_trip(tagged.as_bytes_with_nul(), extra, |answer| String::from_utf8_lossy(answer).into_owned())
    }

    /// Closes the client and waits until TDLib says it is closed: a process that exits with a
    /// live client is aborted by TDLib. Dropping a client does the same.
    pub fn close(self) {}

    /// Closes the client in place and waits until TDLib says it is closed; once. For a client
    /// that is never dropped (a kernel library's, which lives as long as its session).
    pub fn shut_down(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        let _ = self.call_without_answer(r#"{"@type":"close"}"#);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            // SAFETY: as in `call`.
            let answer = unsafe { (self.td.receive)(1.0) };
            if answer.is_null() {
                continue;
            }
            let answer = unsafe { CStr::from_ptr(answer) }.to_bytes();
            if self.owns(answer) && answer.windows(24).any(|w| w == b"authorizationStateClosed") {
                return;
            }
        }
    }

    /// Whether an answer or update is this client's: `td_receive` serves every client of the
    /// process (an in-process pair of TDLib round trips has one per tree), and each numbers
    /// its requests' `@extra` from 1. An answer without `@client_id` is taken to be ours.
    fn owns(&self, answer: &[u8]) -> bool {
        number_after(answer, b"\"@client_id\":").is_none_or(|id| id == self.id as u64)
    }

    /// The next `@extra` to tag a request with.
    pub fn next_extra(&mut self) -> u64 {
        let extra = self.next_extra;
        self.next_extra += 1;
        extra
    }

    /// Sends `request` — a NUL-terminated JSON object that carries `"@extra":extra` — and hands
    /// TDLib's answer to it to `read` where TDLib left it (valid until the next receive),
    /// skipping updates. The measured path: no copy of the request or the answer.
    pub fn round_trip<T>(&mut self, request: &[u8], extra: u64, read: impl FnOnce(&[u8]) -> T) -> Result<T, String> {
        if request.last() != Some(&0) || request[..request.len() - 1].contains(&0) {
            return Err("a request must end in its only NUL byte".into());
        }
        // SAFETY: `request` is NUL-terminated (checked above) and outlives the call.
        unsafe { (self.td.send)(self.id, request.as_ptr().cast()) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            // SAFETY: the answer is valid until the next td_receive on this thread; `read`
            // sees it only before that.
            let answer = unsafe { (self.td.receive)(10.0) };
            if answer.is_null() {
                continue;
            }
            let answer = unsafe { CStr::from_ptr(answer) }.to_bytes();
            if number_after(answer, b"\"@extra\":") == Some(extra) && self.owns(answer) {
                return Ok(read(answer));
            }
        }
        Err(format!("TDLib did not answer request @extra {extra} within 30 s"))
    }

    /// Sends `request` as it is, without waiting for anything.
    pub fn send(&mut self, request: &str) -> Result<(), String> {
        self.call_without_answer(request)
    }

    /// The next update or answer for this client within `timeout`, exactly as TDLib wrote it.
    pub fn receive(&mut self, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            // SAFETY: as in `call`; the answer is copied before the next receive.
            let answer = unsafe { (self.td.receive)(0.1) };
            if answer.is_null() {
                continue;
            }
            let answer = unsafe { CStr::from_ptr(answer) }.to_bytes();
            if self.owns(answer) {
                return Some(String::from_utf8_lossy(answer).into_owned());
            }
        }
        None
    }

    fn call_without_answer(&mut self, request: &str) -> Result<(), String> {
        let request = CString::new(request).map_err(|e| e.to_string())?;
        // SAFETY: as in `call`.
        unsafe { (self.td.send)(self.id, request.as_ptr()) };
        Ok(())
    }
}

impl Drop for Client<'_> {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The number after `key` at the end of an answer, where TDLib puts `@extra` and
/// `@client_id`: `...,"@extra":7,"@client_id":1}`.
fn number_after(answer: &[u8], key: &[u8]) -> Option<u64> {
    let tail = &answer[answer.len().saturating_sub(64)..];
    let at = tail.windows(key.len()).rposition(|w| w == key)? + key.len();
    let digits = tail[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&tail[at..at + digits]).ok()?.parse().ok()
}

/// The echo method that answers with an object like `value`: `testCallString` for a
/// `testString`, and so on; `None` for objects TDLib has no echo for.
pub fn echo_method(value: &Object) -> Option<&'static str> {
    Some(match value {
        Object::TestString(_) => "testCallString",
        Object::TestBytes(_) => "testCallBytes",
        Object::TestVectorInt(_) => "testCallVectorInt",
        Object::TestVectorIntObject(_) => "testCallVectorIntObject",
        Object::TestVectorString(_) => "testCallVectorString",
        Object::TestVectorStringObject(_) => "testCallVectorStringObject",
        _ => return None,
    })
}

fn json_string(value: &str) -> String {
    let mut out = Vec::new();
    serde::Serialize::serialize(value, &mut serde_json::Serializer::with_formatter(&mut out, TdlibFormatter)).expect("strings serialize");
    String::from_utf8(out).expect("the TDLib writer emits ASCII")
}

fn json_of(value: &Object) -> String {
    let mut out = Vec::new();
    Json.encode(value, &mut out).expect("models encode");
    String::from_utf8(out).expect("the TDLib writer emits ASCII")
}

/// The test method whose answer is `value`, if there is one: `testCallString` for `testString`,
/// and so on.
pub fn echo_request(value: &Object) -> Option<String> {
    let x = match value {
        Object::TestString(t) => json_string(&t.value),
        Object::TestBytes(t) => json_string(&base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &t.value)),
        Object::TestVectorInt(t) => serde_json::to_string(&t.value).expect("ints serialize"),
        Object::TestVectorIntObject(t) => {
            format!("[{}]", t.value.iter().map(|v| json_of(&Object::TestInt(v.clone()))).collect::<Vec<_>>().join(","))
        }
        Object::TestVectorString(t) => format!("[{}]", t.value.iter().map(|v| json_string(v)).collect::<Vec<_>>().join(",")),
        Object::TestVectorStringObject(t) => {
            format!("[{}]", t.value.iter().map(|v| json_of(&Object::TestString(v.clone()))).collect::<Vec<_>>().join(","))
        }
        _ => return None,
    };
    let method = echo_method(value)?;
    Some(format!("{{\"@type\":\"{method}\",\"x\":{x}}}"))
}
