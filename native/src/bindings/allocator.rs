//! Controls of glibc's allocator for a long-running server: hand free memory back to the operating
//! system, and keep glibc from raising its thresholds so that freed large blocks do not stay
//! resident. Elsewhere than glibc both do nothing and return false.

use napi_derive::napi;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn malloc_trim(pad: usize) -> i32;
    fn mallopt(param: i32, value: i32) -> i32;
}

/// Hands memory that the C allocator holds free back to the operating system, in every arena
/// (glibc's `malloc_trim`), and returns whether any was released. Start-up (reading the history,
/// compiling hot code on V8's helper threads) leaves tens of megabytes free but resident in
/// malloc arenas that glibc only trims from their top; the service calls this once it is ready.
/// Elsewhere than glibc it does nothing and returns false.
#[napi]
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only returns free pages to the kernel; it takes the arenas' locks.
        unsafe { malloc_trim(0) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Fixes glibc's mmap and trim thresholds at 128 KiB (its initial values), and returns whether it
/// could. By default glibc raises both each time a large block is freed (up to 32 MiB), after
/// which the main heap keeps that much free memory resident for good: a long-running server that
/// once read a large result then sits tens of megabytes above what it uses. Elsewhere than glibc
/// it does nothing and returns false.
#[napi]
pub fn fix_allocator_thresholds() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        const THRESHOLD: i32 = 128 * 1024;
        // SAFETY: mallopt only changes the allocator's tuning parameters.
        unsafe { mallopt(M_MMAP_THRESHOLD, THRESHOLD) == 1 && mallopt(M_TRIM_THRESHOLD, THRESHOLD) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
