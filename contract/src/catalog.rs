//! What a worker binary can measure (`worker --list`): its lanes, its implementations with the
//! lanes and operations each has, and whether TDLib is there for the round trips. The runner
//! plans from this and nothing else.

use serde::{Deserialize, Serialize};

use crate::enums::Operation;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// The lanes `all` runs.
    pub lanes: Vec<String>,
    /// Lanes run only when named (`startup`); absent in workers that predate them.
    #[serde(default)]
    pub opt_in_lanes: Vec<String>,
    pub implementations: Vec<ImplementationInfo>,
    /// Absent in workers that predate it.
    #[serde(default)]
    pub tdlib: Option<TdlibStatus>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImplementationKind {
    Codec,
    /// A reference that is not a format: `clone`, `memcpy`.
    Floor,
    /// TDLib in the loop: needs libtdjson, timed only.
    Tdlib,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplementationInfo {
    pub name: String,
    pub kind: ImplementationKind,
    /// The lanes it has a measurement for.
    pub lanes: Vec<String>,
    pub operations: Vec<Operation>,
}

impl ImplementationInfo {
    /// TDLib's own threads make instruction counts of a round trip vary from run to run.
    pub fn timed_only(&self) -> bool {
        self.kind == ImplementationKind::Tdlib
    }
}

/// Where the worker looks for libtdjson, and whether it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TdlibStatus {
    /// Absolute.
    pub library: String,
    pub available: bool,
    /// How to get it, when it is not there.
    pub how_to_enable: String,
}

/// Workers older than the catalog listed implementations by name only.
#[derive(Deserialize)]
#[serde(untagged)]
enum Listed {
    Info(ImplementationInfo),
    Name(String),
}

#[derive(Deserialize)]
struct AnyCatalog {
    lanes: Vec<String>,
    #[serde(default)]
    opt_in_lanes: Vec<String>,
    implementations: Vec<Listed>,
    #[serde(default)]
    tdlib: Option<TdlibStatus>,
}

impl Catalog {
    /// Reads `worker --list` output, of this worker or an older one. Names only: the entry has
    /// the kind `codec`, every lane and encode and decode — what older workers measured.
    pub fn parse(json: &[u8]) -> Result<Catalog, String> {
        let any: AnyCatalog = serde_json::from_slice(json).map_err(|e| format!("worker --list printed no catalog: {e}"))?;
        let lanes = any.lanes;
        let implementations = any
            .implementations
            .into_iter()
            .map(|listed| match listed {
                Listed::Info(info) => info,
                Listed::Name(name) => ImplementationInfo {
                    name,
                    kind: ImplementationKind::Codec,
                    lanes: lanes.clone(),
                    operations: vec![Operation::Encode, Operation::Decode],
                },
            })
            .collect();
        Ok(Catalog { lanes, opt_in_lanes: any.opt_in_lanes, implementations, tdlib: any.tdlib })
    }

    pub fn implementation(&self, name: &str) -> Option<&ImplementationInfo> {
        self.implementations.iter().find(|i| i.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.implementations.iter().map(|i| i.name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_and_the_old_listing() {
        let catalog = Catalog {
            lanes: vec!["status".into()],
            opt_in_lanes: vec!["startup".into()],
            implementations: vec![ImplementationInfo {
                name: "tdlib-json".into(),
                kind: ImplementationKind::Tdlib,
                lanes: vec!["status".into()],
                operations: vec![Operation::RoundTrip, Operation::EmptyCall],
            }],
            tdlib: Some(TdlibStatus { library: "/x/libtdjson.so".into(), available: false, how_to_enable: "install".into() }),
        };
        assert_eq!(Catalog::parse(&serde_json::to_vec(&catalog).unwrap()).unwrap(), catalog);
        let old = Catalog::parse(br#"{"lanes":["status","message"],"implementations":["json","tl"]}"#).unwrap();
        assert_eq!(old.names(), ["json", "tl"]);
        assert_eq!(old.implementation("tl").unwrap().lanes, ["status", "message"]);
        assert!(old.tdlib.is_none());
        assert!(Catalog::parse(b"usage: worker").is_err());
    }
}
