///Collects answers in a loop, then asks two things in one round.
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct collect;
const _: () = {
    #[allow(dead_code, non_snake_case)]
    fn collect() {}
    #[derive(
        ::mrtr::__private::serde::Deserialize,
        ::mrtr::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::mrtr::__private::serde")]
    #[schemars(crate = "::mrtr::__private::schemars", title = "collect")]
    #[allow(non_camel_case_types, dead_code)]
    struct __MrtrArgs {
        count: u32,
    }
    impl ::mrtr::__private::Machine for collect {
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
                                    "collect",
                                    "Collects answers in a loop, then asks two things in one round.",
                                    ::mrtr::__private::arguments_schema::<__MrtrArgs>(),
                                ),
                                <String as ::mrtr::__private::IntoToolResult>::output_schema(),
                            ),
                            [
                                ::mrtr::__private::InputKind::FormElicitation,
                                ::mrtr::__private::InputKind::Sampling,
                                ::mrtr::__private::InputKind::Roots,
                            ],
                            17082248904457584344u64,
                        )
                        .with_literals(
                            &[",", "Answer {i}?", "Summarize", "stop", "{} {} {}"],
                        )
                })
        }
        fn describe(&self) -> ::core::option::Option<&::mrtr::__private::SuspensionMap> {
            static DESCRIPTION: ::mrtr::__private::SuspensionMap = ::mrtr::__private::SuspensionMap::new(
                "collect",
                &[
                    ::mrtr::__private::Next::Suspension(0usize),
                    ::mrtr::__private::Next::Suspension(1usize),
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
                                "answers",
                                ::core::option::Option::None,
                                ::core::option::Option::None,
                            ),
                            ::mrtr::__private::KeptLocal::new(
                                "",
                                ::core::option::Option::None,
                                ::core::option::Option::Some(
                                    "the items left in `for i in 0..count`",
                                ),
                            ),
                        ],
                        &[
                            ::mrtr::__private::Next::Suspension(0usize),
                            ::mrtr::__private::Next::Suspension(1usize),
                        ],
                    ),
                    ::mrtr::__private::SuspensionPoint::new(
                        &[
                            ::mrtr::__private::RequestSite::new(
                                "sample_1",
                                &[::mrtr::__private::InputKind::Sampling],
                            ),
                            ::mrtr::__private::RequestSite::new(
                                "roots_2",
                                &[::mrtr::__private::InputKind::Roots],
                            ),
                        ],
                        &[
                            ::mrtr::__private::KeptLocal::new(
                                "answers",
                                ::core::option::Option::None,
                                ::core::option::Option::None,
                            ),
                        ],
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
            "Answer {i}?",
            "Summarize",
            "stop",
            "{} {} {}",
        ];
        enum __MrtrFlow<T0, T1, T2, T3, T4, T6> {
            B0 { v0: T0 },
            B1 { v1: T1, v2: T2 },
            B2 { v1: T1, v2: T2, v3: T3 },
            B3 { v1: T1 },
            B4 { v1: T1, v2: T2, v4: T4 },
            B5 { v1: T1, v2: T2 },
            B6 { v1: T1, v6: T6 },
        }
        #[derive(
            ::mrtr::__private::serde::Serialize,
            ::mrtr::__private::serde::Deserialize
        )]
        #[serde(
            crate = "::mrtr::__private::serde",
            bound(
                serialize = "T1: ::mrtr::__private::KeepSerialize, T2: ::mrtr::__private::KeepSerialize",
                deserialize = "T1: ::mrtr::__private::KeepDeserialize<'de>, T2: ::mrtr::__private::KeepDeserialize<'de>"
            )
        )]
        enum __MrtrState<T1, T2, O0_0, O1_0, O1_1> {
            S0 {
                #[serde(rename = "answers")]
                v1: T1,
                #[serde(rename = "the items left in `for i in 0..count`")]
                v2: T2,
                o0: ::core::marker::PhantomData<O0_0>,
            },
            S1 {
                #[serde(rename = "answers")]
                v1: T1,
                o0: ::core::marker::PhantomData<O1_0>,
                o1: ::core::marker::PhantomData<O1_1>,
            },
        }
        let mut __mrtr_slot: ::core::option::Option<__MrtrState<_, _, _, _, _>> = ::core::option::Option::None;
        if let ::core::option::Option::Some(__mrtr_probed) = ::mrtr::__private::probe_slot(
            &__mrtr_slot,
            &__mrtr_input,
        ) {
            return __mrtr_probed;
        }
        let __mrtr_args: __MrtrArgs = __mrtr_input.parse_arguments()?;
        let mut __mrtr_flow: __MrtrFlow<_, _, _, _, _, _>;
        match __mrtr_input.resume {
            ::core::option::Option::None => {
                __mrtr_flow = __MrtrFlow::B0 {
                    v0: __mrtr_args.count,
                };
            }
            ::core::option::Option::Some(mut __mrtr_resume) => {
                __mrtr_slot = ::core::option::Option::Some(
                    __mrtr_resume.state_with_literals(__MRTR_LITERALS)?,
                );
                match __mrtr_slot.take() {
                    ::core::option::Option::Some(
                        __MrtrState::S0 { v1: __mrtr_v1, v2: __mrtr_v2, o0: __mrtr_o0 },
                    ) => {
                        let __mrtr_a0 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "ask_0",
                            __mrtr_o0,
                        )?;
                        __mrtr_flow = __MrtrFlow::B4 {
                            v1: __mrtr_v1,
                            v2: __mrtr_v2,
                            v4: __mrtr_a0,
                        };
                    }
                    ::core::option::Option::Some(
                        __MrtrState::S1 { v1: __mrtr_v1, o0: __mrtr_o0, o1: __mrtr_o1 },
                    ) => {
                        let __mrtr_a0 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "sample_1",
                            __mrtr_o0,
                        )?;
                        let __mrtr_a1 = ::mrtr::__private::take_answer(
                            __mrtr_resume.answers(),
                            "roots_2",
                            __mrtr_o1,
                        )?;
                        __mrtr_flow = __MrtrFlow::B6 {
                            v1: __mrtr_v1,
                            v6: (__mrtr_a0, __mrtr_a1),
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
                __MrtrFlow::B0 { v0: mut count } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let mut answers = Vec::new();
                                let mut __mrtr_t2 = {
                                    #[allow(unused_imports)]
                                    use ::mrtr::__private::{ViaCollect as _, ViaStateIter as _};
                                    (&&::mrtr::__private::Probe::new(0..count)).into_stored()
                                };
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B1 {
                                        v1: answers,
                                        v2: __mrtr_t2,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B1 { v1: mut answers, v2: mut __mrtr_t2 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_next = ::core::iter::Iterator::next(
                                    &mut __mrtr_t2,
                                );
                                match __mrtr_next {
                                    ::core::option::Option::Some(i) => {
                                        return ::mrtr::__private::Exit::end(
                                            __mrtr_exit,
                                            ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B2 {
                                                v1: answers,
                                                v2: __mrtr_t2,
                                                v3: i,
                                            }),
                                        );
                                    }
                                    ::core::option::Option::None => {
                                        return ::mrtr::__private::Exit::end(
                                            __mrtr_exit,
                                            ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B3 {
                                                v1: answers,
                                            }),
                                        );
                                    }
                                }
                            },
                        )
                        .await
                }
                __MrtrFlow::B2 { v1: mut answers, v2: mut __mrtr_t2, v3: mut i } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_in0 = ::mrtr::__private::elicit_input(
                                    ::mrtr::__private::builders::text(format!("Answer {i}?")),
                                );
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Suspend(
                                        match (match ::mrtr::__private::suspend_with(
                                            &mut __mrtr_slot,
                                            __MrtrState::S0 {
                                                v1: ::mrtr::__private::kept(answers),
                                                v2: ::mrtr::__private::kept(__mrtr_t2),
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
                __MrtrFlow::B3 { v1: mut answers } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_in0 = ::mrtr::__private::sample_input(
                                    ::mrtr::__private::builders::prompt("Summarize"),
                                );
                                let __mrtr_in1 = ::mrtr::__private::builders::roots();
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Suspend(
                                        match (match (match ::mrtr::__private::suspend_with(
                                            &mut __mrtr_slot,
                                            __MrtrState::S1 {
                                                v1: ::mrtr::__private::kept(answers),
                                                o0: ::mrtr::__private::outcome_marker(&__mrtr_in0),
                                                o1: ::mrtr::__private::outcome_marker(&__mrtr_in1),
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
                                            .ask("sample_1", __mrtr_in0)
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
                                        })
                                            .ask("roots_2", __mrtr_in1)
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
                __MrtrFlow::B4 {
                    v1: mut answers,
                    v2: mut __mrtr_t2,
                    v4: mut __mrtr_t4,
                } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let answer = __mrtr_t4.ok().unwrap_or_default();
                                if answer == "stop" {
                                    {
                                        return ::mrtr::__private::Exit::end(
                                            __mrtr_exit,
                                            ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B3 {
                                                v1: answers,
                                            }),
                                        );
                                    };
                                }
                                answers.push(answer);
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B5 {
                                        v1: answers,
                                        v2: __mrtr_t2,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B5 { v1: mut answers, v2: mut __mrtr_t2 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                return ::mrtr::__private::Exit::end(
                                    __mrtr_exit,
                                    ::mrtr::__private::BlockEnd::Next(__MrtrFlow::B1 {
                                        v1: answers,
                                        v2: __mrtr_t2,
                                    }),
                                );
                            },
                        )
                        .await
                }
                __MrtrFlow::B6 { v1: mut answers, v6: mut __mrtr_t6 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let (summary, roots) = __mrtr_t6;
                                return ::mrtr::__private::Exit::done(
                                    __mrtr_exit,
                                    format!(
                                        "{} {} {}", answers.join(","), summary.text(), roots.len()
                                    ),
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
