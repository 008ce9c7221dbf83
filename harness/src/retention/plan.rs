//! What a sweep runs: the variants, the command each runs, and the cells of a
//! plan (every task, variant and repeat).

use crate::tasks::Task;

/// The variants, in report order: raw first, then the levels going down, rtk,
/// and `hook`: Lens as a user installs it (`lens init --agent … --global` into
/// the agent's HOME), the prompt naming the plain command.
pub const VARIANTS: [&str; 6] = ["raw", "level2", "level1", "level0", "rtk", "hook"];

/// The command line a variant runs.
pub fn variant_command(variant: &str, command: &str) -> String {
    match variant {
        "raw" | "hook" => command.to_string(),
        "rtk" => format!("rtk {command}"),
        v => format!("lens --level {} {command}", v.trim_start_matches("level")),
    }
}

/// One cell of the plan.
#[derive(Debug, Clone)]
pub struct Cell<'a> {
    /// The task.
    pub task: &'a Task,
    /// The variant.
    pub variant: String,
    /// 1-based repeat.
    pub repeat: usize,
}

/// Every cell, task by task; the rtk variant only where rtk claims the command.
pub fn plan<'a>(tasks: &'a [Task], variants: &[String], repeats: usize) -> Vec<Cell<'a>> {
    let mut cells = Vec::new();
    for task in tasks {
        for v in variants {
            if v == "rtk" && !task.rtk {
                continue;
            }
            for repeat in 1..=repeats {
                cells.push(Cell {
                    task,
                    variant: v.clone(),
                    repeat,
                });
            }
        }
    }
    cells
}
