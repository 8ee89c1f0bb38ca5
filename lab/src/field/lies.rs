//! Which lies the study plants, read from the ground truth alone: a
//! read-only lie on every tool that writes, a non-destructive lie on every
//! tool that deletes or overwrites, an idempotency lie on every tool that
//! is not idempotent.

use witness_model::vocab::Hint;

use super::entry::Truth;

/// A lie the relay plants in a tool's annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LieKind {
    /// `readOnlyHint: true` on a tool that writes.
    ReadOnly,
    /// `readOnlyHint: false, destructiveHint: false` on a tool that deletes
    /// or overwrites.
    NonDestructive,
    /// `idempotentHint: true` on a tool whose repeat does more.
    Idempotent,
}

impl LieKind {
    pub const ALL: [LieKind; 3] = [
        LieKind::ReadOnly,
        LieKind::NonDestructive,
        LieKind::Idempotent,
    ];

    /// As the relay takes it and the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            LieKind::ReadOnly => "read-only",
            LieKind::NonDestructive => "non-destructive",
            LieKind::Idempotent => "idempotent",
        }
    }

    /// The hint the lie is about.
    pub fn hint(self) -> Hint {
        match self {
            LieKind::ReadOnly => Hint::ReadOnly,
            LieKind::NonDestructive => Hint::Destructive,
            LieKind::Idempotent => Hint::Idempotent,
        }
    }
}

/// One planted lie.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lie {
    pub tool: String,
    pub kind: LieKind,
}

impl Lie {
    /// `<tool>=<kind>`, as the relay takes it.
    pub fn variant(&self) -> String {
        format!("{}={}", self.tool, self.kind.as_str())
    }
}

/// The lies for the tools the server `listed`, in tool order then kind
/// order. A tool the truth knows but the server does not list gets none
/// (the relay would refuse it); a listed tool the truth does not know gets
/// none either: a lie needs the truth to say it is one.
pub fn plan(truth: &Truth, listed: &[String]) -> Vec<Lie> {
    let mut lies = Vec::new();
    for tool in listed {
        let Some(t) = truth.tool(tool) else {
            continue;
        };
        for kind in LieKind::ALL {
            let applies = match kind {
                LieKind::ReadOnly => t.writes,
                LieKind::NonDestructive => t.deletes_or_overwrites,
                LieKind::Idempotent => !t.idempotent,
            };
            if applies {
                lies.push(Lie {
                    tool: tool.clone(),
                    kind,
                });
            }
        }
    }
    lies.sort();
    lies
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth() -> Truth {
        Truth::parse(
            r#"
[[tool]]
name = "read_note"
writes = false
deletes_or_overwrites = false
idempotent = true
network = false

[[tool]]
name = "append_note"
writes = true
deletes_or_overwrites = false
idempotent = false
network = false

[[tool]]
name = "write_note"
writes = true
deletes_or_overwrites = true
idempotent = true
network = false

[[tool]]
name = "gone"
writes = true
deletes_or_overwrites = true
idempotent = false
network = false
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn every_writer_deleter_and_non_idempotent_tool_gets_its_lie() {
        let listed: Vec<String> = ["write_note", "read_note", "append_note", "unknown"]
            .map(str::to_owned)
            .to_vec();
        let lies: Vec<String> = plan(&truth(), &listed).iter().map(Lie::variant).collect();
        assert_eq!(
            lies,
            [
                "append_note=read-only",
                "append_note=idempotent",
                "write_note=read-only",
                "write_note=non-destructive",
            ],
            "a reader gets none, a tool not listed (gone) or not in the truth (unknown) gets none"
        );
    }

    #[test]
    fn each_lie_is_about_one_hint() {
        assert_eq!(LieKind::ReadOnly.hint(), Hint::ReadOnly);
        assert_eq!(LieKind::NonDestructive.hint(), Hint::Destructive);
        assert_eq!(LieKind::Idempotent.hint(), Hint::Idempotent);
    }
}
