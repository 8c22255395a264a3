// Build script: lets napi-rs set the linker flags a Node addon needs (only when the bindings are built).
fn main() {
    if std::env::var_os("CARGO_FEATURE_NODE").is_some() {
        napi_build::setup();
    }
}
