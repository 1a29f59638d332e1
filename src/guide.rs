//! The guide: how to write, serve, operate and test MRTR tools with `mrtr`, one topic per
//! page. Start with the [crate front page](crate) for the tour.

pub mod writing_tools {
    #![doc = include_str!("../docs/guide/writing-tools.md")]
}

pub mod serving {
    #![doc = include_str!("../docs/guide/serving.md")]
}

pub mod tasks {
    #![doc = include_str!("../docs/guide/tasks.md")]
}

pub mod operating {
    #![doc = include_str!("../docs/guide/operating.md")]
}

pub mod security {
    #![doc = include_str!("../docs/guide/security.md")]
}

#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth {
    #![doc = include_str!("../docs/guide/auth.md")]
}

pub mod testing {
    #![doc = include_str!("../docs/guide/testing.md")]
}

pub mod clients {
    #![doc = include_str!("../docs/guide/clients.md")]
}
