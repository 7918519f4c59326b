//! A counting global allocator shows that a step of a fixed-size model performs no heap
//! allocation, for every integrator on the generated double pendulum.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mechanism::models::DoublePendulum;
use mechanism::runtime::{Integrator, Penalized, Spook, State, ZhangSkeel, ZhangSkeelSimplified};

/// Counts allocations made by the current thread, so other test threads do not interfere.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `steps` steps after one warm-up step and returns the allocations they made.
fn allocations_in_steps<Model, I: Integrator<Model, 4>>(
    integrator: &mut I,
    model: &Model,
    steps: usize,
) -> usize {
    let mut state: State<4> = DoublePendulum::initial_state();
    integrator.step(model, &mut state).expect("warm-up step");
    let before = allocations();
    for _ in 0..steps {
        integrator.step(model, &mut state).expect("step");
    }
    allocations() - before
}

#[test]
fn counter_sees_allocations() {
    let before = allocations();
    let boxed = std::hint::black_box(Box::new(1.0_f64));
    drop(boxed);
    assert_eq!(
        allocations() - before,
        1,
        "the counting allocator must count"
    );
}

#[test]
fn spook_step_does_not_allocate() {
    let model = DoublePendulum::default();
    let mut spook = Spook::<4, 2>::new(1.0 / 60.0).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut spook, &model, 1000), 0);
}

#[test]
fn zhang_skeel_steps_do_not_allocate() {
    let model = Penalized::new(DoublePendulum::default(), 20.0);
    let mut zss = ZhangSkeelSimplified::<4>::new(0.1).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut zss, &model, 1000), 0);
    let mut zs = ZhangSkeel::<4>::new(0.1).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut zs, &model, 1000), 0);
}
