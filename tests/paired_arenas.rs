//! The paired harness opens each tree's kernel library on a thread of its own
//! ([`tdbench::worker::paired::in_arenas_of_their_own`]) so that what each allocates lies at the
//! same offsets whichever opened first. One test in a binary of its own: a thread that ended
//! before (another test's) would hand its used arena to the next thread that starts.

use tdbench::worker::paired::in_arenas_of_their_own;

const PAGE: usize = 4096;

/// Allocations the size of a lane's values, small ones between them, kept alive; and where the
/// large ones start within their page. (Small ones may come from a thread's cache of freed
/// chunks, which the two threads fill a little differently: seen here, a 24-byte one at offset
/// 448 in one arena and 1024 in the other. The large ones are what copies read.)
fn allocate() -> Result<(Vec<Vec<u8>>, Vec<usize>), String> {
    let kept: Vec<Vec<u8>> = [24, 1000, 5000, 100, 65_536, 70_000].iter().map(|&n| vec![1u8; n]).collect();
    let offsets = kept.iter().filter(|v| v.len() >= 1000).map(|v| v.as_ptr() as usize % PAGE).collect();
    Ok((kept, offsets))
}

#[test]
fn each_side_allocates_at_the_same_page_offsets_and_a_failure_is_an_error() {
    // On one heap the second side's allocations land after the first's, at other offsets:
    // what the harness did before, and what this test would see if the arenas were shared.
    let (one, two) = (allocate().unwrap(), allocate().unwrap());
    assert_ne!(one.1, two.1, "on one heap the offsets differ");
    let (first, second) = in_arenas_of_their_own(allocate, allocate);
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(first.1, second.1);
    // Both sides' allocations are alive at once: they are in different places.
    assert_ne!(first.0[0].as_ptr(), second.0[0].as_ptr());

    // After that (the threads that ended hand on their arenas): a side that fails or panics is
    // an error, and the other still opens.
    let (failed, opened) = in_arenas_of_their_own(|| Err::<u8, _>("no library".to_string()), || Ok(1));
    assert_eq!((failed, opened), (Err("no library".to_string()), Ok(1)));
    let (opened, panicked) = in_arenas_of_their_own(|| Ok(2u8), || panic!("a bug while opening"));
    assert_eq!(opened, Ok(2));
    assert!(panicked.unwrap_err().contains("panicked"));
}
