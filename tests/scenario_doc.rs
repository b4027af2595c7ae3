//! docs/scenario.md against the loader: each section's table lists exactly the keys the
//! loader's serde type for that section accepts (read from the type itself, not from a list
//! kept here), and every schema type has its section.

use lossless::config::schema::*;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::collections::BTreeSet;

/// A deserializer that records the field names a struct asks for, then stops.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend_from_slice(fields);
        Err(de::Error::custom("fields recorded"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

fn fields<T: for<'de> Deserialize<'de>>() -> BTreeSet<String> {
    let mut names = Vec::new();
    let _ = T::deserialize(FieldNames(&mut names));
    assert!(
        !names.is_empty(),
        "{} is not a struct",
        std::any::type_name::<T>()
    );
    names.into_iter().map(String::from).collect()
}

/// The keys of each `<!-- type: T -->` section of the document.
fn documented() -> Vec<(String, BTreeSet<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenario.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("<!-- type: ") {
            out.push((t.trim_end_matches(" -->").to_string(), BTreeSet::new()));
        } else if let (Some(rest), Some((_, keys))) = (line.strip_prefix("| `"), out.last_mut()) {
            keys.insert(rest.split('`').next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn every_key_the_loader_takes_is_documented_and_nothing_else() {
    let types: Vec<(&str, BTreeSet<String>)> = vec![
        ("ScenarioFile", fields::<ScenarioFile>()),
        ("MeasureRaw", fields::<MeasureRaw>()),
        ("HostRaw", fields::<HostRaw>()),
        ("NicRaw", fields::<NicRaw>()),
        ("DcqcnRaw", fields::<DcqcnRaw>()),
        ("LinkRaw", fields::<LinkRaw>()),
        ("FlowRaw", fields::<FlowRaw>()),
        ("RcRaw", fields::<RcRaw>()),
        ("TcpRaw", fields::<TcpRaw>()),
        ("VlanRaw", fields::<VlanRaw>()),
        ("CollectiveRaw", fields::<CollectiveRaw>()),
        ("EventRaw", fields::<EventRaw>()),
        ("InjectRaw", fields::<InjectRaw>()),
        ("FaultRaw", fields::<FaultRaw>()),
        ("OutputsRaw", fields::<OutputsRaw>()),
        ("PcapRaw", fields::<PcapRaw>()),
        ("TimeseriesRaw", fields::<TimeseriesRaw>()),
        ("SwitchRaw", fields::<SwitchRaw>()),
        ("PortsUniform", fields::<PortsUniform>()),
        ("PortEntry", fields::<PortEntry>()),
        ("CbfcRaw", fields::<CbfcRaw>()),
        ("TrimmingRaw", fields::<TrimmingRaw>()),
        ("LlrRaw", fields::<LlrRaw>()),
        ("BufferRaw", fields::<BufferRaw>()),
        ("PoolRaw", fields::<PoolRaw>()),
        ("ProfileRaw", fields::<ProfileRaw>()),
        ("QosRaw", fields::<QosRaw>()),
        ("SchedRaw", fields::<SchedRaw>()),
        ("WredRaw", fields::<WredRaw>()),
        ("PfcwdRaw", fields::<PfcwdRaw>()),
        ("ForwardingRaw", fields::<ForwardingRaw>()),
        ("FdbRaw", fields::<FdbRaw>()),
        ("RouteRaw", fields::<RouteRaw>()),
        ("GroupRaw", fields::<GroupRaw>()),
        ("MemberRaw", fields::<MemberRaw>()),
        ("AclTableRaw", fields::<AclTableRaw>()),
        ("AclRuleRaw", fields::<AclRuleRaw>()),
        ("SonicMapRaw", fields::<SonicMapRaw>()),
        ("P4Raw", fields::<P4Raw>()),
    ];
    let doc = documented();
    for (name, keys) in &types {
        let Some((_, documented)) = doc.iter().find(|(t, _)| t == name) else {
            panic!("docs/scenario.md has no section for {name} (keys {keys:?})");
        };
        assert_eq!(
            documented, keys,
            "docs/scenario.md section of {name}: documented (left) vs accepted (right)"
        );
    }
    for (t, _) in &doc {
        assert!(
            types.iter().any(|(n, _)| n == t),
            "docs/scenario.md documents unknown type {t}"
        );
    }
    // Every struct of the schema is in the list above (a new one needs a section).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/schema");
    let mut schema = String::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        schema += &std::fs::read_to_string(e.unwrap().path()).unwrap();
    }
    assert!(
        schema.contains("pub struct ScenarioFile"),
        "{}",
        dir.display()
    );
    for line in schema.lines() {
        if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.split([' ', '{', '(']).next().unwrap();
            assert!(
                types.iter().any(|(n, _)| *n == name),
                "schema type {name} is not checked here"
            );
        }
    }
}
