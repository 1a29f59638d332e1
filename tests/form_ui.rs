//! Compile-time diagnostics of `#[derive(Form)]` and `#[derive(FormChoice)]`: one file per
//! diagnostic under `tests/ui/form/`, with the expected compiler output beside it.

#[test]
fn form_diagnostics() {
    trybuild::TestCases::new().compile_fail("tests/ui/form/*.rs");
}
