//! The judge: one question — is the answer correct? — asked of a model
//! through the same drivers, one request per slice of answers (per-answer
//! requests cost more and tell nothing more; seed 000).
//!
//! The judge sees the user's turns, the case's expectation and the final
//! answers, never the calls or whether they succeeded, so it cannot turn a
//! pass into a failure on any ground but wrong content. It fails open: an
//! endpoint error, a reply that is not the JSON asked for, or an item left
//! out leaves the item `unjudged`, and an unjudged item keeps passing.
//!
//! The reply is read as plain JSON text, not through a provider's
//! structured-output mode, whose schema rules differ between providers
//! (seed 000's landmines); bounds and shape are checked here, in code.

use serde_json::{Value, json};
use witness_model::agent::case::GoldenCase;
use witness_model::agent::{JudgeBatch, JudgeItem};
use witness_model::vocab::AnswerGrade;

use crate::driver::{Driver, Message, Request, RunKey};

/// What the judge is told.
pub const JUDGE_SYSTEM: &str = "You grade the final answers of an assistant. For each item you get \
what the user asked (one entry per turn), what a correct answer must say, and the assistant's final \
answer to each turn. Judge only whether the answer's content is correct and complete for the user; \
ignore style. Reply with only this JSON and nothing else: \
{\"grades\": [{\"item\": <item number>, \"correct\": true or false}]}";

/// One answer to grade.
pub struct Item<'a> {
    pub case: &'a GoldenCase,
    pub model: &'a str,
    pub run: u32,
    /// The final answer of each turn (`None`: the turn had none).
    pub answers: Vec<Option<String>>,
}

/// A grade and a few words on how it was reached.
pub type Grade = (AnswerGrade, String);

/// Grades `items` in slices of `slice` through `driver` with `model`; one
/// grade per item, in order, and the batches as recorded.
pub fn judge(
    driver: &mut dyn Driver,
    model: &str,
    slice: u32,
    items: &[Item<'_>],
) -> (Vec<Grade>, Vec<JudgeBatch>) {
    let size = usize::try_from(slice.max(1)).unwrap_or(1);
    let mut grades = Vec::new();
    let mut batches = Vec::new();
    for (n, chunk) in items.chunks(size).enumerate() {
        let batch = u32::try_from(n).unwrap_or(u32::MAX);
        let (chunk_grades, record) = one_batch(driver, model, batch, chunk);
        grades.extend(chunk_grades);
        batches.push(record);
    }
    (grades, batches)
}

fn one_batch(
    driver: &mut dyn Driver,
    model: &str,
    batch: u32,
    chunk: &[Item<'_>],
) -> (Vec<Grade>, JudgeBatch) {
    let messages = [Message::User {
        text: listing(chunk),
    }];
    let request = Request {
        system: JUDGE_SYSTEM,
        tools: &[],
        messages: &messages,
        max_tokens: 1024,
    };
    let (answer, record) = match driver.begin(&RunKey::Judge { batch }) {
        Ok(()) => {
            let answer = driver.complete(model, &request);
            (answer.reply.ok(), answer.record)
        }
        Err(e) => (
            None,
            crate::driver::Answer::new(&request, Err(e), None).record,
        ),
    };
    let read = match (&answer, &record.error) {
        (Some(reply), _) => read_grades(reply.text.as_deref().unwrap_or(""), chunk.len()),
        (None, error) => Err(format!(
            "the judge failed: {}",
            error.as_deref().unwrap_or("no reply")
        )),
    };
    let (found, problem) = match read {
        Ok(found) => {
            let missing = found.iter().filter(|g| g.is_none()).count();
            let problem = (missing > 0).then(|| {
                format!(
                    "the judge graded {} of {} items",
                    found.len() - missing,
                    found.len()
                )
            });
            (found, problem)
        }
        Err(problem) => (vec![None; chunk.len()], Some(problem)),
    };
    let how = format!(" (judge {model}, batch {})", batch + 1);
    let grades: Vec<Grade> = found
        .iter()
        .map(|grade| match grade {
            Some(true) => (AnswerGrade::Correct, how.clone()),
            Some(false) => (AnswerGrade::Incorrect, how.clone()),
            None => (
                AnswerGrade::Unjudged,
                format!(": {}", problem.as_deref().unwrap_or("no grade")),
            ),
        })
        .collect();
    let items = chunk
        .iter()
        .zip(1u32..)
        .zip(&grades)
        .map(|((item, number), (grade, _))| JudgeItem {
            item: number,
            case: item.case.id.clone(),
            model: item.model.to_owned(),
            run: item.run,
            grade: *grade,
        })
        .collect();
    let recorded = JudgeBatch {
        items,
        exchange: record,
        problem,
    };
    (grades, recorded)
}

/// The judge's one message: the items, numbered from 1, as JSON. Only what
/// the user asked, the expectation and the answers: never the calls.
fn listing(chunk: &[Item<'_>]) -> String {
    let listed: Vec<Value> = chunk
        .iter()
        .zip(1u32..)
        .map(|(item, number)| {
            let request: Vec<&str> = item.case.turns.iter().map(|t| t.user.as_str()).collect();
            let answer: Vec<&str> = item
                .answers
                .iter()
                .map(|a| a.as_deref().unwrap_or("(no answer)"))
                .collect();
            json!({
                "item": number,
                "request": request,
                "expectation": item.case.judge.as_ref().map(|j| j.expect.as_str()),
                "answer": answer,
            })
        })
        .collect();
    json!({ "items": listed }).to_string()
}

/// The grades in a judge's reply, by item number (1..=count). `Err` when
/// the reply holds no JSON object with a `grades` array. An item graded
/// twice with different grades is left ungraded.
fn read_grades(text: &str, count: usize) -> Result<Vec<Option<bool>>, String> {
    let not_asked = || "the judge's reply is not the JSON asked for".to_owned();
    let start = text.find('{').ok_or_else(not_asked)?;
    let end = text.rfind('}').ok_or_else(not_asked)?;
    let value: Value = text
        .get(start..=end)
        .and_then(|json| serde_json::from_str(json).ok())
        .ok_or_else(not_asked)?;
    let grades = value
        .get("grades")
        .and_then(Value::as_array)
        .ok_or_else(not_asked)?;
    let mut found: Vec<Option<bool>> = vec![None; count];
    let mut conflicted = vec![false; count];
    for grade in grades {
        let (Some(item), Some(correct)) = (
            grade.get("item").and_then(Value::as_u64),
            grade.get("correct").and_then(Value::as_bool),
        ) else {
            continue;
        };
        let Some(index) = usize::try_from(item).ok().and_then(|i| i.checked_sub(1)) else {
            continue;
        };
        match found.get(index).copied() {
            Some(None) => found[index] = Some(correct),
            Some(Some(previous)) if previous != correct => conflicted[index] = true,
            _ => {}
        }
    }
    for (slot, conflict) in found.iter_mut().zip(conflicted) {
        if conflict {
            *slot = None;
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_are_read_leniently_and_conflicts_left_unjudged() {
        let text = "Sure! {\"grades\": [{\"item\": 1, \"correct\": true}, {\"item\": 2, \"correct\": false}, \
                    {\"item\": 3, \"correct\": true}, {\"item\": 3, \"correct\": false}, {\"item\": 9, \"correct\": true}, \
                    {\"item\": 0, \"correct\": true}, {\"item\": \"4\", \"correct\": true}]} Hope that helps.";
        assert_eq!(
            read_grades(text, 4),
            Ok(vec![Some(true), Some(false), None, None])
        );
        assert!(read_grades("I think they are all fine.", 2).is_err());
        assert!(read_grades("{\"verdict\": true}", 2).is_err());
        assert!(read_grades("{not json}", 1).is_err());
    }
}
