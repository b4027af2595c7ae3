//! What a run reports: the report as data ([`model`], the JSON contract), filled from the models
//! ([`json`], with [`collective`] for collectives), rendered as text ([`text`]) and as figures ([`plot`] for a run,
//! [`sweep_plot`] for a sweep); and the `check` plan ([`plan`]) and the progress bar
//! ([`progress`]).

pub mod collective;
pub mod json;
pub mod model;
pub mod plan;
pub mod plot;
pub mod progress;
pub mod sweep_plot;
pub mod text;
