//! `scratch::remove_all` closes the registry for the whole process, so it
//! is tested here, in a test binary of its own.

use witness_process::scratch;

#[test]
fn an_exit_removes_every_live_directory_and_makes_no_new_one() {
    let first = scratch::tempdir("witness-scratch-exit-").expect("tempdir");
    let second = scratch::tempdir("witness-scratch-exit-").expect("tempdir");
    std::fs::write(first.path().join("a.db"), b"image").expect("write");
    std::fs::create_dir(second.path().join("nested")).expect("mkdir");
    let paths = [first.path().to_path_buf(), second.path().to_path_buf()];
    scratch::remove_all();
    for path in &paths {
        assert!(!path.exists(), "{} is left", path.display());
    }
    assert!(
        scratch::tempdir("witness-scratch-exit-").is_err(),
        "a directory made after the exit began would be left behind"
    );
    // The owners dropping them later (an exit that did unwind) is harmless.
    drop(first);
    drop(second);
}
