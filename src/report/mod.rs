//! What a run reports: the report as data ([`model`], the JSON contract), filled from the models
//! ([`json`], with [`collective`] for collectives), rendered as text ([`text`]) and as figures ([`plot`] for a run,
//! [`sweep_plot`] for a sweep); and the `check` plan ([`plan`]) and the progress bar
//! ([`progress`]); [`plan_transports`]: the plan's lines for RC, TCP, collectives and loss;
//! [`plan_acl`]: its ACL tables.

pub mod collective;
pub mod json;
pub mod model;
pub mod plan;
pub mod plan_acl;
pub mod plan_transports;
pub mod plot;
pub mod progress;
pub mod prometheus;
pub mod sweep_plot;
pub mod text;
