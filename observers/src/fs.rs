//! Filesystem observer (being written).
