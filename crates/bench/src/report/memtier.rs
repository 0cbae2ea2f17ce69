//! memtier_benchmark text table and JSON "Format version" 2 (not built yet).
