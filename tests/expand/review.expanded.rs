/**Reviews files with a shared audit log: app state, a loop over borrowed items with a
borrow derived from the item, and a string literal kept across suspensions.*/
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct review;
const _: () = {
    #[allow(dead_code, non_snake_case)]
    fn review() {}
    #[derive(
        ::mrtr::__private::serde::Deserialize,
        ::mrtr::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::mrtr::__private::serde")]
    #[schemars(crate = "::mrtr::__private::schemars", title = "review")]
    #[allow(non_camel_case_types, dead_code)]
    struct __MrtrArgs {
        files: Vec<String>,
        strict: bool,
    }
    impl ::mrtr::__private::Machine for review {
        type Output = ::mrtr::__private::rmcp::model::CallToolResult;
        fn descriptor(&self) -> &::mrtr::__private::MachineDescriptor {
            static DESCRIPTOR: ::std::sync::OnceLock<
                ::mrtr::__private::MachineDescriptor,
            > = ::std::sync::OnceLock::new();
            DESCRIPTOR
                .get_or_init(|| {
                    ::mrtr::__private::MachineDescriptor::tool(
                            ::mrtr::__private::with_output_schema(
                                ::mrtr::__private::rmcp::model::Tool::new(
                                    "review",
                                    "Reviews files with a shared audit log: app state, a loop over borrowed items with a\nborrow derived from the item, and a string literal kept across suspensions.",
                                    ::mrtr::__private::arguments_schema::<__MrtrArgs>(),
                                ),
                                <String as ::mrtr::__private::IntoToolResult>::output_schema(),
                            ),
                            [::mrtr::__private::InputKind::FormElicitation],
                            14967226327058863271u64,
                        )
                        .with_states([
                            ::mrtr::__private::StateRequirement::of::<Audit>(),
                        ])
                        .with_literals(
                            &[",", "Keep {name} ({i}, {mode})?", "lenient", "strict"],
                        )
                })
        }
        fn describe(&self) -> ::core::option::Option<&::mrtr::__private::SuspensionMap> {
            static DESCRIPTION: ::mrtr::__private::SuspensionMap = ::mrtr::__private::SuspensionMap::new(
                "review",
                &[
                    ::mrtr::__private::Next::Suspension(0usize),
                    ::mrtr::__private::Next::Done,
                ],
                &[
                    ::mrtr::__private::SuspensionPoint::new(
                        &[
                            ::mrtr::__private::RequestSite::new(
                                "ask_0",
                                &[::mrtr::__private::InputKind::FormElicitation],
                            ),
                        ],
                        &[
                            ::mrtr::__private::KeptLocal::new(
                                "mode",
                                ::core::option::Option::None,
                                ::core::option::Option::None,
                            ),
                            ::mrtr::__private::KeptLocal::new(
                                "kept",
                                ::core::option::Option::None,
                                ::core::option::Option::None,
                            ),
                            ::mrtr::__private::KeptLocal::new(
                                "",
                                ::core::option::Option::None,
                                ::core::option::Option::Some(
                                    "a copy of the items of `for (i, file) in files.iter().enumerate()`",
                                ),
                            ),
                        ],
                        &[
                            ::mrtr::__private::Next::Suspension(0usize),
                            ::mrtr::__private::Next::Done,
                        ],
                    ),
                ],
            );
            ::core::option::Option::Some(&DESCRIPTION)
        }
        fn unreadable_locals(
            &self,
        ) -> ::std::vec::Vec<::mrtr::__private::UnreadableLocal> {
            ::mrtr::__private::probe_machine(self)
        }
        fn step<'a>(
            &'a self,
            run: ::mrtr::__private::Run<'a>,
        ) -> ::mrtr::__private::StepFuture<
            'a,
            ::mrtr::__private::rmcp::model::CallToolResult,
        > {
            ::std::boxed::Box::pin(async move {
                match __mrtr_run(run).await? {
                    ::mrtr::__private::Step::Done(value) => {
                        ::core::result::Result::Ok(
                            ::mrtr::__private::Step::Done(
                                ::mrtr::__private::IntoToolResult::into_tool_result(value)?,
                            ),
                        )
                    }
                    ::mrtr::__private::Step::Suspend(suspend) => {
                        ::core::result::Result::Ok(
                            ::mrtr::__private::Step::Suspend(suspend),
                        )
                    }
                }
            })
        }
    }
    #[allow(
        unused_variables,
        unused_mut,
        unused_assignments,
        unused_braces,
        unused_parens,
        unreachable_code,
        unreachable_patterns,
        irrefutable_let_patterns,
        dead_code,
        non_snake_case,
        non_camel_case_types,
        clippy::all
    )]
    async fn __mrtr_run(
        __mrtr_input: ::mrtr::__private::Run<'_>,
    ) -> ::core::result::Result<
        ::mrtr::__private::Step<String>,
        ::mrtr::__private::StepError,
    > {
        let __mrtr_exit = {
            #[allow(unused_imports)]
            use ::mrtr::__private::{ViaPlainExit as _, ViaResultExit as _};
            (&::mrtr::__private::ExitProbe::<String>::new()).exit()
        };
        const __MRTR_LITERALS: &[&str] = &[
            ",",
            "Keep {name} ({i}, {mode})?",
            "lenient",
            "strict",
        ];
        enum __MrtrFlow<T0, T1, T2, T3, T4, T5, T9> {
            B0 { v0: T0, v1: T1, v2: T2 },
            B1 { v2: T2, v3: T3, v4: T4, v5: T5 },
            B2 { v2: T2, v3: T3, v4: T4, v5: T5 },
            B3 { v2: T2, v3: T3, v4: T4 },
            B4 { v2: T2, v3: T3, v4: T4, v5: T5, v9: T9 },
            B5 { v2: T2, v3: T3, v4: T4, v5: T5 },
            B6 { v2: T2, v3: T3, v4: T4, v5: T5 },
        }
        #[derive(
            ::mrtr::__private::serde::Serialize,
            ::mrtr::__private::serde::Deserialize
        )]
        #[serde(
            crate = "::mrtr::__private::serde",
            bound(
                serialize = "T3: ::mrtr::__private::KeepSerialize, T4: ::mrtr::__private::KeepSerialize, T5: ::mrtr::__private::KeepSerialize",
                deserialize = "T3: ::mrtr::__private::KeepDeserialize<'de>, T4: ::mrtr::__private::KeepDeserialize<'de>, T5: ::mrtr::__private::KeepDeserialize<'de>"
            )
        )]
        enum __MrtrState<T3, T4, T5, O0_0> {
            S0 {
                #[serde(rename = "mode")]
                v3: T3,
                #[serde(rename = "kept")]
                v4: T4,
                #[serde(
                    rename = "a copy of the items of `for (i, file) in files.iter().enumerate()`"
                )]
                v5: T5,
                o0: ::core::marker::PhantomData<O0_0>,
            },
        }
        let mut __mrtr_slot: ::core::option::Option<__MrtrState<_, _, _, _>> = ::core::option::Option::None;
        if let ::core::option::Option::Some(__mrtr_probed) = ::mrtr::__private::probe_slot(
            &__mrtr_slot,
            &__mrtr_input,
        ) {
            return __mrtr_probed;
        }
        let __mrtr_args: __MrtrArgs = __mrtr_input.parse_arguments()?;
        let __mrtr_state0: State<Audit> = ::mrtr::__private::RequestCx::state::<
            Audit,
        >(__mrtr_input.cx)?;
        let mut __mrtr_flow: __MrtrFlow<_, _, _, _, _, _, _>;
        match __mrtr_input.resume {
            ::core::option::Option::None => {
                __mrtr_flow = __MrtrFlow::B0 {
                    v0: __mrtr_args.files,
                    v1: __mrtr_args.strict,
                    v2: __mrtr_state0,
                };
            }
            ::core::option::Option::Some(mut __mrtr_resume) => {
                __mrtr_slot = ::core::option::Option::Some(
                    __mrtr_resume.state_with_literals(__MRTR_LITERALS)?,
                );
                match __mrtr_slot.take() {
                    ::core::option::Option::Some(
                        __MrtrState::S0 {
                            v3: __mrtr_v3,
                            v4: __mrtr_v4,
                            v5: __mrtr_v5,
                            o0: __mrtr_o0,
                        },
                    ) => {
                        let __mrtr_a0 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "ask_0",
                            __mrtr_o0,
                        )?;
                        __mrtr_flow = __MrtrFlow::B4 {
                            v2: __mrtr_state0,
                            v3: __mrtr_v3,
                            v4: __mrtr_v4,
                            v5: __mrtr_v5,
                            v9: __mrtr_a0,
                        };
                    }
                    _ => {
                        return ::core::result::Result::Err(
                            ::mrtr::__private::StepError::StateMismatch(
                                ::core::convert::Into::into("no resume point"),
                            ),
                        );
                    }
                }
            }
        }
        let __mrtr_flow_type = ::mrtr::__private::flow_type(&__mrtr_flow);
        loop {
            let __mrtr_ended = match __mrtr_flow {
                __MrtrFlow::B0 { v0: mut files, v1: mut strict, v2: mut audit } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let mode = if strict { "strict" } else { "lenient" };
                                let mut kept = Vec::new();
                                let mut __mrtr_t5 = ::mrtr::__private::Snapshot::new(
                                    ::core::iter::Iterator::collect::<
                                        ::std::vec::Vec<_>,
                                    >(
                                        ::core::iter::Iterator::map(
                                            ::core::iter::IntoIterator::into_iter(
                                                files.iter().enumerate(),
                                            ),
                                            |(__mrtr_part0, __mrtr_part1)| (
                                                {
                                                    #[allow(unused_imports)]
                                                    use ::mrtr::__private::{ViaOwned as _, ViaRef as _};
                                                    (&&::mrtr::__private::Probe::new(__mrtr_part0)).store_item()
                                                },
                                                {
                                                    #[allow(unused_imports)]
                                                    use ::mrtr::__private::{ViaOwned as _, ViaRef as _};
                                                    (&&::mrtr::__private::Probe::new(__mrtr_part1)).store_item()
                                                },
                                            ),
                                        ),
                                    ),
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B1 {
                                        v2: audit,
                                        v3: mode,
                                        v4: kept,
                                        v5: __mrtr_t5,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B1 {
                    v2: mut audit,
                    v3: mut mode,
                    v4: mut kept,
                    v5: mut __mrtr_t5,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                if ::mrtr::__private::Snapshot::advance(&mut __mrtr_t5) {
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B2 {
                                            v2: audit,
                                            v3: mode,
                                            v4: kept,
                                            v5: __mrtr_t5,
                                        }),
                                    );
                                } else {
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B3 {
                                            v2: audit,
                                            v3: mode,
                                            v4: kept,
                                        }),
                                    );
                                }
                            },
                        )
                        .await
                }
                __MrtrFlow::B2 {
                    v2: mut audit,
                    v3: mut mode,
                    v4: mut kept,
                    v5: mut __mrtr_t5,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let i = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .0,
                                );
                                let file = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .1,
                                );
                                let name = file.trim();
                                let __mrtr_in0 = ::mrtr::__private::elicit_input(
                                    ::mrtr::__private::builders::confirm(
                                        format!("Keep {name} ({i}, {mode})?"),
                                    ),
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Suspend(
                                        match (match ::mrtr::__private::suspend_with(
                                            &mut __mrtr_slot,
                                            __MrtrState::S0 {
                                                v3: ::mrtr::__private::kept(mode),
                                                v4: ::mrtr::__private::kept(kept),
                                                v5: ::mrtr::__private::kept(__mrtr_t5),
                                                o0: ::mrtr::__private::outcome_marker(&__mrtr_in0),
                                            },
                                            __MRTR_LITERALS,
                                        ) {
                                            ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                            ::core::result::Result::Err(__mrtr_err) => {
                                                return ::mrtr::__private::Exit::end(
                                                    __mrtr_exit,
                                                    ::mrtr::__private::BlockEnd::Fail(
                                                        ::core::convert::From::from(__mrtr_err),
                                                    ),
                                                );
                                            }
                                        })
                                            .ask("ask_0", __mrtr_in0)
                                        {
                                            ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                            ::core::result::Result::Err(__mrtr_err) => {
                                                return ::mrtr::__private::Exit::end(
                                                    __mrtr_exit,
                                                    ::mrtr::__private::BlockEnd::Fail(
                                                        ::core::convert::From::from(__mrtr_err),
                                                    ),
                                                );
                                            }
                                        },
                                    ),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B3 { v2: mut audit, v3: mut mode, v4: mut kept } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                audit.record(mode, &kept);
                                return ::mrtr::__private::Exit::done(
                                    __mrtr_exit,
                                    kept.join(","),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B4 {
                    v2: mut audit,
                    v3: mut mode,
                    v4: mut kept,
                    v5: mut __mrtr_t5,
                    v9: mut __mrtr_t9,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let i = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .0,
                                );
                                let file = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .1,
                                );
                                let name = file.trim();
                                if __mrtr_t9.ok().unwrap_or(false) {
                                    {
                                        kept.push(name.to_string());
                                    };
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B5 {
                                            v2: audit,
                                            v3: mode,
                                            v4: kept,
                                            v5: __mrtr_t5,
                                        }),
                                    );
                                } else {
                                    ();
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B5 {
                                            v2: audit,
                                            v3: mode,
                                            v4: kept,
                                            v5: __mrtr_t5,
                                        }),
                                    );
                                }
                            },
                        )
                        .await
                }
                __MrtrFlow::B5 {
                    v2: mut audit,
                    v3: mut mode,
                    v4: mut kept,
                    v5: mut __mrtr_t5,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let i = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .0,
                                );
                                let file = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .1,
                                );
                                let name = file.trim();
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B6 {
                                        v2: audit,
                                        v3: mode,
                                        v4: kept,
                                        v5: __mrtr_t5,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B6 {
                    v2: mut audit,
                    v3: mut mode,
                    v4: mut kept,
                    v5: mut __mrtr_t5,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let i = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .0,
                                );
                                let file = ::mrtr::__private::Slot::view(
                                    &(*match ::mrtr::__private::Snapshot::current(&__mrtr_t5) {
                                        ::core::result::Result::Ok(__mrtr_ok) => __mrtr_ok,
                                        ::core::result::Result::Err(__mrtr_err) => {
                                            return ::mrtr::__private::Exit::end(
                                                __mrtr_exit,
                                                ::mrtr::__private::BlockEnd::Fail(
                                                    ::core::convert::From::from(__mrtr_err),
                                                ),
                                            );
                                        }
                                    })
                                        .1,
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B1 {
                                        v2: audit,
                                        v3: mode,
                                        v4: kept,
                                        v5: __mrtr_t5,
                                    }),
                                );
                            },
                        )
                        .await
                }
            };
            match ::mrtr::__private::Exit::finish(__mrtr_exit, __mrtr_ended) {
                ::mrtr::__private::BlockEnd::Next(__mrtr_next) => {
                    __mrtr_flow = __mrtr_next;
                }
                ::mrtr::__private::BlockEnd::Done(__mrtr_value) => {
                    return ::core::result::Result::Ok(
                        ::mrtr::__private::Step::Done(__mrtr_value),
                    );
                }
                ::mrtr::__private::BlockEnd::Suspend(__mrtr_suspend) => {
                    return ::core::result::Result::Ok(
                        ::mrtr::__private::Step::Suspend(__mrtr_suspend),
                    );
                }
                ::mrtr::__private::BlockEnd::Fail(__mrtr_error) => {
                    return ::core::result::Result::Err(__mrtr_error);
                }
            }
        }
    }
};
