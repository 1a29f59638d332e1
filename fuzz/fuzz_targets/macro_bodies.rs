//! libFuzzer entry for the expander: a generated tool body through parse → check → lower →
//! analyze → expand (`mrtr-macros/src/machine/body_gen.rs` holds the generator and oracle).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = mrtr_macros_expander::body_gen::fuzz_one(data);
});
