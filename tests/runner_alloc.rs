//! B/op and allocs/op, with the counting allocator installed. One test function only: the
//! counters are process-wide, so a concurrent test would pollute them.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use edgebench::runner::alloc::CountingAlloc;
use edgebench::runner::{BenchTime, Runner};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::system();

#[test]
fn the_timing_loop_allocates_nothing_and_counts_what_the_op_allocates() {
    let mut runner = Runner::new(
        BenchTime::Iterations(100_000),
        Arc::new(AtomicBool::new(false)),
    );

    let noop = runner
        .run(|i| black_box(Ok::<u64, ()>(i)).map(drop), |_| {})
        .unwrap();
    assert_eq!(noop.n, 100_000);
    assert_eq!((noop.allocs_per_op, noop.bytes_per_op), (0, 0));

    let one_vec = runner
        .run(
            |i| {
                let v: Vec<u8> = black_box(vec![i as u8; 100]);
                drop(black_box(v));
                Ok::<(), ()>(())
            },
            |_| {},
        )
        .unwrap();
    assert_eq!((one_vec.allocs_per_op, one_vec.bytes_per_op), (1, 100));
}
