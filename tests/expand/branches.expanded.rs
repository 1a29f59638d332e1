///Branches on an answer, with shadowing.
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct pick;
const _: () = {
    #[allow(dead_code, non_snake_case)]
    fn pick() {}
    #[derive(
        ::mrtr::__private::serde::Deserialize,
        ::mrtr::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::mrtr::__private::serde")]
    #[schemars(crate = "::mrtr::__private::schemars", title = "pick")]
    #[allow(non_camel_case_types, dead_code)]
    struct __MrtrArgs {
        topic: String,
    }
    impl ::mrtr::__private::Machine for pick {
        type Output = ::mrtr::__private::rmcp::model::GetPromptResult;
        fn descriptor(&self) -> &::mrtr::__private::MachineDescriptor {
            static DESCRIPTOR: ::std::sync::OnceLock<
                ::mrtr::__private::MachineDescriptor,
            > = ::std::sync::OnceLock::new();
            DESCRIPTOR
                .get_or_init(|| {
                    ::mrtr::__private::MachineDescriptor::prompt(
                            ::mrtr::__private::rmcp::model::Prompt::new(
                                "pick",
                                ::core::option::Option::Some(
                                    "Branches on an answer, with shadowing.",
                                ),
                                ::core::option::Option::Some(
                                    ::std::vec![
                                        { let mut argument =
                                        ::mrtr::__private::rmcp::model::PromptArgument::new("topic");
                                        argument.description = ::core::option::Option::None;
                                        argument.required = ::core::option::Option::Some(true);
                                        argument }
                                    ],
                                ),
                            ),
                            [::mrtr::__private::InputKind::FormElicitation],
                            11192638857499269601u64,
                        )
                        .with_literals(
                            &[
                                "Detail?",
                                "Which?",
                                "a",
                                "b",
                                "detail",
                                "none",
                                "{topic}: {choice}",
                            ],
                        )
                })
        }
        fn describe(&self) -> ::core::option::Option<&::mrtr::__private::SuspensionMap> {
            static DESCRIPTION: ::mrtr::__private::SuspensionMap = ::mrtr::__private::SuspensionMap::new(
                "pick",
                &[::mrtr::__private::Next::Suspension(0usize)],
                &[
                    ::mrtr::__private::SuspensionPoint::new(
                        &[
                            ::mrtr::__private::RequestSite::new(
                                "ask_0",
                                &[::mrtr::__private::InputKind::FormElicitation],
                            ),
                        ],
                        &[],
                        &[
                            ::mrtr::__private::Next::Suspension(1usize),
                            ::mrtr::__private::Next::Done,
                        ],
                    ),
                    ::mrtr::__private::SuspensionPoint::new(
                        &[
                            ::mrtr::__private::RequestSite::new(
                                "detail",
                                &[::mrtr::__private::InputKind::FormElicitation],
                            ),
                        ],
                        &[],
                        &[::mrtr::__private::Next::Done],
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
            ::mrtr::__private::rmcp::model::GetPromptResult,
        > {
            ::std::boxed::Box::pin(async move {
                match __mrtr_run(run).await? {
                    ::mrtr::__private::Step::Done(value) => {
                        ::core::result::Result::Ok(
                            ::mrtr::__private::Step::Done(
                                ::mrtr::__private::IntoPromptResult::into_prompt_result(
                                    value,
                                )?,
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
            "Detail?",
            "Which?",
            "a",
            "b",
            "detail",
            "none",
            "{topic}: {choice}",
        ];
        enum __MrtrFlow<T0, T1, T2, T4, T5> {
            B0 { v0: T0 },
            B1 { v0: T0, v2: T2 },
            B2 { v0: T0, v1: T1 },
            B3 { v0: T0, v4: T4 },
            B4 { v0: T0 },
            B5 { v0: T0, v5: T5 },
            B6 { v0: T0, v4: T4 },
        }
        #[derive(
            ::mrtr::__private::serde::Serialize,
            ::mrtr::__private::serde::Deserialize
        )]
        #[serde(
            crate = "::mrtr::__private::serde",
            bound(serialize = "", deserialize = "")
        )]
        enum __MrtrState<O0_0, O1_0> {
            S0 { o0: ::core::marker::PhantomData<O0_0> },
            S1 { o0: ::core::marker::PhantomData<O1_0> },
        }
        let mut __mrtr_slot: ::core::option::Option<__MrtrState<_, _>> = ::core::option::Option::None;
        if let ::core::option::Option::Some(__mrtr_probed) = ::mrtr::__private::probe_slot(
            &__mrtr_slot,
            &__mrtr_input,
        ) {
            return __mrtr_probed;
        }
        let __mrtr_args: __MrtrArgs = __mrtr_input.parse_arguments()?;
        let mut __mrtr_flow: __MrtrFlow<_, _, _, _, _>;
        match __mrtr_input.resume {
            ::core::option::Option::None => {
                __mrtr_flow = __MrtrFlow::B0 {
                    v0: __mrtr_args.topic,
                };
            }
            ::core::option::Option::Some(mut __mrtr_resume) => {
                __mrtr_slot = ::core::option::Option::Some(
                    __mrtr_resume.state_with_literals(__MRTR_LITERALS)?,
                );
                match __mrtr_slot.take() {
                    ::core::option::Option::Some(__MrtrState::S0 { o0: __mrtr_o0 }) => {
                        let __mrtr_a0 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "ask_0",
                            __mrtr_o0,
                        )?;
                        __mrtr_flow = __MrtrFlow::B1 {
                            v0: __mrtr_args.topic,
                            v2: __mrtr_a0,
                        };
                    }
                    ::core::option::Option::Some(__MrtrState::S1 { o0: __mrtr_o0 }) => {
                        let __mrtr_a0 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "detail",
                            __mrtr_o0,
                        )?;
                        __mrtr_flow = __MrtrFlow::B5 {
                            v0: __mrtr_args.topic,
                            v5: __mrtr_a0,
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
                __MrtrFlow::B0 { v0: mut topic } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_in0 = ::mrtr::__private::elicit_input(
                                    ::mrtr::__private::builders::choice("Which?", ["a", "b"]),
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Suspend(
                                        match (match ::mrtr::__private::suspend_with(
                                            &mut __mrtr_slot,
                                            __MrtrState::S0 {
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
                __MrtrFlow::B1 { v0: mut topic, v2: mut __mrtr_t2 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                match __mrtr_t2 {
                                    Elicited::Accept(choice) => {
                                        let __mrtr_t1 = choice;
                                        return ::mrtr::__private::Exit::end(
                                            __mrtr_exit,
                                            ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B2 {
                                                v0: topic,
                                                v1: __mrtr_t1,
                                            }),
                                        );
                                    }
                                    _ => {
                                        let __mrtr_t1 = return ::mrtr::__private::Exit::done(
                                            __mrtr_exit,
                                            "none".to_string(),
                                        );
                                        return ::mrtr::__private::Exit::end(
                                            __mrtr_exit,
                                            ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B2 {
                                                v0: topic,
                                                v1: __mrtr_t1,
                                            }),
                                        );
                                    }
                                }
                            },
                        )
                        .await
                }
                __MrtrFlow::B2 { v0: mut topic, v1: mut __mrtr_t1 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let choice = __mrtr_t1;
                                if choice == "a" {
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B4 {
                                            v0: topic,
                                        }),
                                    );
                                } else {
                                    let __mrtr_t4 = { choice };
                                    return ::mrtr::__private::Exit::end(
                                        __mrtr_exit,
                                        ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B3 {
                                            v0: topic,
                                            v4: __mrtr_t4,
                                        }),
                                    );
                                }
                            },
                        )
                        .await
                }
                __MrtrFlow::B3 { v0: mut topic, v4: mut __mrtr_t4 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let choice = __mrtr_t4;
                                return ::mrtr::__private::Exit::done(
                                    __mrtr_exit,
                                    format!("{topic}: {choice}"),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B4 { v0: mut topic } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_in0 = ::mrtr::__private::elicit_input(
                                    ::mrtr::__private::builders::text("Detail?"),
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Suspend(
                                        match (match ::mrtr::__private::suspend_with(
                                            &mut __mrtr_slot,
                                            __MrtrState::S1 {
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
                                            .ask("detail", __mrtr_in0)
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
                __MrtrFlow::B5 { v0: mut topic, v5: mut __mrtr_t5 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_t4 = __mrtr_t5.ok().unwrap_or_default();
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B6 {
                                        v0: topic,
                                        v4: __mrtr_t4,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B6 { v0: mut topic, v4: mut __mrtr_t4 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B3 {
                                        v0: topic,
                                        v4: __mrtr_t4,
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
