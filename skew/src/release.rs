//! A schema release's models, as the formats need them: one [`Release`] per generated module of
//! `tdbench_models` (the current models and those under its `skew` module).

use std::collections::HashMap;
use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tdbench_models::proto::ProtoOneof;
use tdbench_models::td_json::TdJson;
use tdbench_models::tl::{TlError, TlObject};

/// One release's `Object` with what every format reads and writes it with.
pub trait Release: 'static {
    /// As the tables name it, e.g. "TDLib 1.8.65".
    const NAME: &'static str;
    /// The declaration lines the models were generated from.
    const SCHEMA: &'static str;
    type Object: Serialize
        + DeserializeOwned
        + bincode::Encode
        + bincode::Decode<()>
        + TdJson
        + TlObject
        + ProtoOneof
        + Clone
        + Debug
        + PartialEq;

    /// The generated whole-payload TL reader (constructor id, fields, nothing after).
    fn read_tl(bytes: &[u8]) -> Result<Self::Object, TlError>;
}

macro_rules! release {
    ($(#[$doc:meta])* $name:ident, $($module:ident)::+, $label:literal) => {
        $(#[$doc])*
        pub struct $name;

        impl Release for $name {
            const NAME: &'static str = $label;
            const SCHEMA: &'static str = $($module)::+::SCHEMA;
            type Object = $($module)::+::Object;

            fn read_tl(bytes: &[u8]) -> Result<Self::Object, TlError> {
                $($module)::+::Object::from_tl(bytes)
            }
        }
    };
}

release!(
    /// The models' own schema, TDLib 1.8.66, protobuf numbered by the committed number map.
    Current, tdbench_models, "TDLib 1.8.66"
);
release!(
    /// The same declarations as TDLib 1.8.65 declared them.
    V1_8_65, tdbench_models::skew::v1_8_65, "TDLib 1.8.65"
);
release!(
    /// TDLib 1.8.65 with protobuf numbered by declaration order.
    V1_8_65ByPosition, tdbench_models::skew::v1_8_65_by_position, "TDLib 1.8.65"
);
release!(
    /// The same declarations as TDLib 1.8.60 declared them (`textEntityTypeDateTime` is newer).
    V1_8_60, tdbench_models::skew::v1_8_60, "TDLib 1.8.60"
);
release!(
    /// TDLib 1.8.66 with protobuf numbered by declaration order.
    V1_8_66ByPosition, tdbench_models::skew::v1_8_66_by_position, "TDLib 1.8.66"
);
release!(
    /// The known cases as 1.8.65 declared them.
    Known1_8_65, tdbench_models::skew::known_1_8_65, "TDLib 1.8.65"
);
release!(
    /// The known cases as 1.8.66 declares them, protobuf numbered by the map.
    Known1_8_66, tdbench_models::skew::known_1_8_66, "TDLib 1.8.66"
);
release!(
    /// The known cases as 1.8.66 declares them, protobuf numbered by declaration order.
    Known1_8_66ByPosition, tdbench_models::skew::known_1_8_66_by_position, "TDLib 1.8.66"
);

/// The models' own `Object`, which the corpus holds.
pub type CurrentObject = tdbench_models::Object;

/// Each constructor's fields with their types as written (`int53`, `vector<int64>`, `message`),
/// in declaration order, from a release's schema text.
pub fn fields_by_constructor(schema: &str) -> HashMap<String, Vec<(String, String)>> {
    let definitions = tl_parser::parse_schema(schema).expect("a release's schema parsed when its models were generated");
    definitions.iter().map(|d| (d.name.clone(), d.params.iter().map(|p| (p.name.clone(), p.ty.to_string())).collect())).collect()
}
