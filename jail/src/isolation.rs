//! How a server was isolated: every layer the sandbox tried, whether it
//! held, and the level the report states.

use std::path::PathBuf;

use serde::Serialize;

use witness_model::audit::LayerEntry;
use witness_model::vocab::IsolationLevel;

use crate::sandbox;

/// How the server was isolated, as the report states it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Isolation {
    pub level: IsolationLevel,
    pub detail: String,
    /// Every layer, in [`IsolationLayer::ALL`] order, and whether it held.
    pub layers: Vec<LayerEntry>,
}

impl Isolation {
    /// The isolation the layers add up to.
    pub fn of_layers(layers: Vec<LayerEntry>) -> Self {
        let (level, detail) = sandbox::level_of(&layers);
        Self {
            level,
            detail,
            layers,
        }
    }

    /// The same, when the server may also write beneath `dirs`: writes
    /// outside the jail were not all out of its reach, so at most partial.
    pub fn writable_beyond(mut self, dirs: &[PathBuf]) -> Self {
        if dirs.is_empty() {
            return self;
        }
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        if self.level == IsolationLevel::Contained {
            self.level = IsolationLevel::Partial;
        }
        self.detail = format!(
            "{}; but the server could also write beneath {} (the live stores)",
            self.detail,
            shown.join(", ")
        );
        self
    }

    /// The same, its detail ending with how the stores came into the jail
    /// (copy-on-write views or copies: [`crate::cow`]).
    pub fn with_stores(mut self, stores: Option<String>) -> Self {
        if let Some(stores) = stores {
            self.detail = format!("{}; {stores}", self.detail);
        }
        self
    }

    /// No layer, for a reason that applies to all of them.
    pub fn none(detail: &str) -> Self {
        Self {
            level: IsolationLevel::None,
            detail: detail.into(),
            layers: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Jail, JailSpec};

    #[test]
    fn a_jail_that_lets_the_server_write_elsewhere_is_not_called_contained() {
        let contained = Isolation {
            level: IsolationLevel::Contained,
            detail: "sandboxed".into(),
            layers: Vec::new(),
        };
        assert_eq!(contained.clone().writable_beyond(&[]), contained);
        let live = contained.writable_beyond(&[PathBuf::from("/data")]);
        assert_eq!(live.level, IsolationLevel::Partial);
        assert!(
            live.detail.contains("also write beneath /data"),
            "{}",
            live.detail
        );
        let missing = Jail::create(JailSpec {
            command: Vec::new(),
            stores: Vec::new(),
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        })
        .map(|mut jail| jail.also_writable(&[PathBuf::from("/nonexistent/mcp-witness")]));
        assert!(matches!(missing, Ok(Err(_))));
    }
}
