//! Collects compile errors so that one build reports every mistake in a model.
//!
//! Modelled on serde_derive's `Ctxt` and cxx's `Errors`: each check pushes a spanned error and
//! carries on; [`Errors::finish`] is the barrier between pipeline stages.

use proc_macro2::Span;
use quote::ToTokens;

/// Accumulates spanned errors from one stage of the pipeline.
#[derive(Default)]
pub struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Creates an empty collector.
    pub fn new() -> Self {
        Errors::default()
    }

    /// Records `message` at `span`.
    pub fn error_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records `message` spanning the user's tokens `tokens`.
    pub fn error_spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an already built error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Returns whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// Ends a stage inside a function: `Err` with every error recorded so far (which are then
    /// forgotten), or `Ok` if there are none.
    pub fn barrier(&mut self) -> syn::Result<()> {
        std::mem::take(self).finish()
    }

    /// Ends the stage: `Err` with every recorded error, if any.
    pub fn finish(self) -> syn::Result<()> {
        match self.combined {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
