//! The heap an in-process engine holds after loading a file of RESP commands: what
//! redis-server reports as `used_memory` growth for the same commands (scripts/reading-memory.sh
//! loads the same file into both).
//!
//! A counting global allocator tracks the live heap twice: the bytes asked for (what
//! edgebench's own counting allocator, `src/runner/alloc.rs`, counts) and the bytes the
//! allocator really handed out (`malloc_usable_size`, glibc's size classes; redis-server's
//! `used_memory` counts jemalloc's the same way). The engine's heap before the load is
//! subtracted, so the figure is the data's cost alone.
//!
//!   cargo bench -p edgebench-engine --bench load_heap -- FILE [UNITS]
//!
//! prints the growth in bytes, and per unit (a reading, a member: whatever the file holds
//! UNITS of; default: per command).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

use edgebench_engine::resp::RequestParser;
use edgebench_engine::{Engine, Reply};

static ASKED: AtomicI64 = AtomicI64::new(0);
static USABLE: AtomicI64 = AtomicI64::new(0);

struct Counting;

fn usable(ptr: *mut u8) -> i64 {
    // SAFETY: `ptr` is a live allocation of the system allocator (glibc malloc).
    unsafe { libc::malloc_usable_size(ptr.cast()) as i64 }
}

// SAFETY: every call forwards to `System`; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            ASKED.fetch_add(layout.size() as i64, Ordering::Relaxed);
            USABLE.fetch_add(usable(p), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ASKED.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        USABLE.fetch_sub(usable(ptr), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = usable(ptr);
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            ASKED.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
            USABLE.fetch_add(usable(p) - before, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn heap() -> (i64, i64) {
    (
        ASKED.load(Ordering::Relaxed),
        USABLE.load(Ordering::Relaxed),
    )
}

fn main() {
    // `cargo bench` passes `--bench`; the file is the first other argument.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(path) = args.first() else {
        eprintln!(
            "usage: load_heap FILE [UNITS]   (FILE: RESP commands, as redis-cli --pipe takes)"
        );
        std::process::exit(2);
    };
    let file = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let engine = Engine::new();
    let mut client = engine.client();
    let mut parser = RequestParser::default();
    let mut commands = 0u64;
    // Warm the engine's lazily built parts (command table, shard maps) before the baseline.
    engine.execute(&mut client, &[&b"PING"[..]]);
    let before = heap();
    let mut rest = &file[..];
    while !rest.is_empty() {
        let request = parser
            .parse(rest, true)
            .unwrap_or_else(|e| panic!("{path}: bad RESP after {commands} commands: {e}"))
            .unwrap_or_else(|| panic!("{path}: truncated after {commands} commands"));
        let consumed = request.consumed();
        let args: Vec<&[u8]> = request.args().collect();
        if let Reply::Error(e) = engine.execute(&mut client, &args) {
            panic!("{path}: command {commands} failed: {e}");
        }
        commands += 1;
        rest = &rest[consumed..];
    }
    let after = heap();
    let units: u64 = args.get(1).map_or(commands, |u| {
        u.parse()
            .unwrap_or_else(|_| panic!("UNITS must be a count, not {u}"))
    });
    let (asked, usable) = (after.0 - before.0, after.1 - before.1);
    println!(
        "commands={commands} units={units} asked_bytes={asked} usable_bytes={usable} \
         asked_per_unit={:.1} usable_per_unit={:.1}",
        asked as f64 / units as f64,
        usable as f64 / units as f64
    );
}
