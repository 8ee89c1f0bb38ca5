//! SQLite observer (being written).
