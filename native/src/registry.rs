//! One loaded copy of each model per process.
//!
//! Piscina runs the scoring code in several worker threads, and each loads the addon and asks for
//! the model. The addon is one shared library per process, so this registry (a process-wide map from
//! a digest of the model text to a weak reference) hands every thread the same `Arc<Model>`: eight
//! workers hold one copy of the trees and SHAP tables, not eight. Entries die with their last user.

use crate::error::Result;
use crate::model::Model;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Two independent 64-bit digests plus the length (a collision would need all three to agree),
/// and the SHAP table limit the model was built with.
type Key = (u64, u64, usize, usize);

fn registry() -> &'static Mutex<HashMap<Key, Weak<Model>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<Key, Weak<Model>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

fn key_of(text: &str, table_bits: usize) -> Key {
    let digest = |salt: u64| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        text.hash(&mut h);
        h.finish()
    };
    (digest(0x9e37_79b9_7f4a_7c15), digest(0xc2b2_ae3d_27d4_eb4f), text.len(), table_bits)
}

/// The process's model for this text: the existing one if any thread holds it, else a new one.
pub fn load(text: &str, table_bits: usize) -> Result<(Arc<Model>, bool)> {
    let key = key_of(text, table_bits);
    // Parse outside the lock when the model is new; the lock only guards the map.
    if let Some(model) = registry().lock().unwrap_or_else(|e| e.into_inner()).get(&key).and_then(Weak::upgrade) {
        return Ok((model, true));
    }
    let model = Arc::new(Model::with_table_bits(text, table_bits)?);
    let mut map = registry().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(existing) = map.get(&key).and_then(Weak::upgrade) {
        return Ok((existing, true)); // another thread won the race; drop ours
    }
    map.retain(|_, w| w.strong_count() > 0);
    map.insert(key, Arc::downgrade(&model));
    Ok((model, false))
}

/// Models currently alive in this process.
pub fn live_models() -> usize {
    registry().lock().unwrap_or_else(|e| e.into_inner()).values().filter(|w| w.strong_count() > 0).count()
}
