//! A tool's descriptor under another name: hand-written test machines borrow a macro tool's
//! arguments and schema this way.

use mrtr::machine::{Listing, MachineDescriptor};

/// `descriptor`, listed as the tool `name`.
pub fn renamed(descriptor: &MachineDescriptor, name: &str) -> MachineDescriptor {
    let mut descriptor = descriptor.clone();
    if let Listing::Tool(listed) = &mut descriptor.listing {
        listed.name = name.to_string().into();
    }
    descriptor
}
