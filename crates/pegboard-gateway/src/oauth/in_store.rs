//! `"credentials": "store"` for this process: `pegboard login NAME --store URL` (and the
//! gateway, when its config keeps credentials in its store) opens the store and says where the
//! credentials go, before any login or connection reads them (see `crate::credentials`).

use super::error::LoginError;
use crate::config::StoreSettings;
use crate::credentials::StoreError;

/// Keep this process's `"credentials": "store"` credentials in the store of `settings`,
/// sealed with the key in `PEGBOARD_STORE_KEY`. Must be called inside a Tokio runtime.
///
/// # Errors
/// The key is missing or not 32 bytes; the store's URL cannot be used; or this pegboard was
/// built without the `store` feature.
pub fn credentials_in_store(settings: &StoreSettings) -> Result<(), LoginError> {
    #[cfg(feature = "store")]
    {
        let store = crate::store::Store::open(settings, None)
            .map_err(|e| StoreError::Shared(e.to_string()))?;
        crate::credentials::use_store(store)?;
        Ok(())
    }
    #[cfg(not(feature = "store"))]
    {
        let _ = settings;
        Err(StoreError::NoStore.into())
    }
}
