//! Compile-time rejections, one file per case: `TRYBUILD=overwrite` regenerates the
//! expected messages after a toolchain change.

#[test]
fn rejected_at_compile_time() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/tool/*.rs");
}
