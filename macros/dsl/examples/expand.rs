//! Prints the pretty-printed expansion of a `mechanism!` body read from a file.
//!
//! ```sh
//! cargo run -p mechanism-dsl --release --example expand -- src/models/double_pendulum.rs
//! ```

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args().nth(1).ok_or("usage: expand FILE.rs")?;
    let source = std::fs::read_to_string(&path)?;
    let file = syn::parse_file(&source)?;
    for item in file.items {
        let syn::Item::Macro(item) = item else {
            continue;
        };
        if !item.mac.path.is_ident("mechanism")
            && !item
                .mac
                .path
                .segments
                .iter()
                .any(|s| s.ident == "mechanism")
        {
            continue;
        }
        let start = std::time::Instant::now();
        let ast = syn::parse2(item.mac.tokens.clone())?;
        let tokens = mechanism_dsl::expand_model(&ast)?;
        let elapsed = start.elapsed();
        let expanded: syn::File = syn::parse2(tokens)?;
        println!("{}", prettyplease::unparse(&expanded));
        eprintln!("expanded in {:.1} ms", elapsed.as_secs_f64() * 1e3);
    }
    Ok(())
}
