//! The in-process engine's INFO `used_memory` is the live heap of edgebench's counting
//! allocator (what `fleet` reports as the engine's store size), as redis-server's is its
//! allocator's. One test function only: the counters are process-wide.

use edgebench::engine::cmd::server::set_heap_probe;
use edgebench::engine::{Engine, EngineConnection};
use edgebench::runner::alloc::{self, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::system();

fn memory(conn: &mut EngineConnection, field: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg("memory").query(conn).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {info}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn used_memory_follows_the_live_heap_while_counting_and_the_rss_after() {
    set_heap_probe(alloc::live_bytes);
    let mut conn = EngineConnection::new(Engine::new());
    let before = memory(&mut conn, "used_memory");
    // What INFO answered is the live heap then; a little was allocated and freed since.
    let now = alloc::live_bytes().unwrap();
    assert!(now.abs_diff(before) < 64 * 1024, "{before} {now}");
    // An 8 MiB value: the heap grows by it (and less than 1 MiB of anything else).
    const VALUE: u64 = 8 << 20;
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(vec![7u8; VALUE as usize])
        .query(&mut conn)
        .unwrap();
    let with = memory(&mut conn, "used_memory");
    assert!(
        with - before >= VALUE && with - before < VALUE + (1 << 20),
        "{before} → {with}"
    );
    // Deleted, it is given back.
    let _: u64 = redis::cmd("DEL").arg("big").query(&mut conn).unwrap();
    let after = memory(&mut conn, "used_memory");
    assert!(after < before + (1 << 20), "{before} → {with} → {after}");
    // Counting switched off (`edgebench serve`, `kv`): the heap is no longer known, and
    // used_memory is the resident set size again.
    alloc::set_counting(false);
    assert_eq!(alloc::live_bytes(), None);
    let info: String = redis::cmd("INFO").arg("memory").query(&mut conn).unwrap();
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(field("used_memory"), field("used_memory_rss"));
}
