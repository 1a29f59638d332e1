//! libFuzzer entry for `mrtr_fuzz::hostile_state` (the target and its oracle live there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mrtr_fuzz::hostile_state::run(data));
