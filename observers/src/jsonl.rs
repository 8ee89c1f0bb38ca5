//! JSON-lines observer (being written).
