//! RESP wire protocol (stub; being written).
