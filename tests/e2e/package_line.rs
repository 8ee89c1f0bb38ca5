//! A package line that cannot be one is refused before anything is
//! installed or launched: one line, exit 2. (Installing and auditing real
//! packages needs a registry: tests/published/audit_package.rs.)

use std::process::Command;

#[test]
fn malformed_and_unpinned_package_lines_are_one_line_invalid_invocations() {
    let cache = tempfile::tempdir().expect("tempdir");
    let cases: [(&[&str], &str); 6] = [
        (&["audit", "npx -y @scope/server"], "pin a version"),
        (&["audit", "uvx mcp-server-x"], "pin a version"),
        (&["audit", "npm:@scope/server@^1.2"], "exact"),
        (&["audit", "node server.js"], "is not a package"),
        (
            &["plan", "--", "npx", "--registry", "x", "pkg@1.0.0"],
            "not understood",
        ),
        (
            &["guidance", "--server", "x", "pypi:bad name==1.0"],
            "not a package",
        ),
    ];
    for (args, words) in cases {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
            .args(args)
            .env("MCP_WITNESS_INSTALLS", cache.path())
            .output()
            .expect("mcp-witness runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(words), "{args:?}: {stderr}");
        assert!(
            std::fs::read_dir(cache.path())
                .expect("cache")
                .next()
                .is_none(),
            "{args:?}: nothing installed"
        );
    }
}
