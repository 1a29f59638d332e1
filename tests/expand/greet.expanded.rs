///Greets someone by name.
#[allow(non_camel_case_types)]
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::default::Default
)]
struct greet;
const _: () = {
    #[allow(dead_code, non_snake_case)]
    fn greet() {}
    #[derive(
        ::mrtr::__private::serde::Deserialize,
        ::mrtr::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::mrtr::__private::serde")]
    #[schemars(crate = "::mrtr::__private::schemars", title = "greet")]
    #[allow(non_camel_case_types, dead_code)]
    struct __MrtrArgs {
        greeting: String,
    }
    impl ::mrtr::__private::Machine for greet {
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
                                    "greet",
                                    "Greets someone by name.",
                                    ::mrtr::__private::arguments_schema::<__MrtrArgs>(),
                                ),
                                <Result<
                                    String,
                                    ToolError,
                                > as ::mrtr::__private::IntoToolResult>::output_schema(),
                            ),
                            [::mrtr::__private::InputKind::FormElicitation],
                            7120620927298835057u64,
                        )
                        .with_literals(&["Your name?", "{greeting}, {name}!"])
                })
        }
        fn describe(&self) -> ::core::option::Option<&::mrtr::__private::SuspensionMap> {
            static DESCRIPTION: ::mrtr::__private::SuspensionMap = ::mrtr::__private::SuspensionMap::new(
                "greet",
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
        ::mrtr::__private::Step<Result<String, ToolError>>,
        ::mrtr::__private::StepError,
    > {
        let __mrtr_exit = {
            #[allow(unused_imports)]
            use ::mrtr::__private::{ViaPlainExit as _, ViaResultExit as _};
            (&::mrtr::__private::ExitProbe::<Result<String, ToolError>>::new()).exit()
        };
        const __MRTR_LITERALS: &[&str] = &["Your name?", "{greeting}, {name}!"];
        enum __MrtrFlow<T0, T1> {
            B0 { v0: T0 },
            B1 { v0: T0, v1: T1 },
        }
        #[derive(
            ::mrtr::__private::serde::Serialize,
            ::mrtr::__private::serde::Deserialize
        )]
        #[serde(
            crate = "::mrtr::__private::serde",
            bound(serialize = "", deserialize = "")
        )]
        enum __MrtrState<O0_0> {
            S0 { o0: ::core::marker::PhantomData<O0_0> },
        }
        let mut __mrtr_slot: ::core::option::Option<__MrtrState<_>> = ::core::option::Option::None;
        if let ::core::option::Option::Some(__mrtr_probed) = ::mrtr::__private::probe_slot(
            &__mrtr_slot,
            &__mrtr_input,
        ) {
            return __mrtr_probed;
        }
        let __mrtr_args: __MrtrArgs = __mrtr_input.parse_arguments()?;
        let mut __mrtr_flow: __MrtrFlow<_, _>;
        match __mrtr_input.resume {
            ::core::option::Option::None => {
                __mrtr_flow = __MrtrFlow::B0 {
                    v0: __mrtr_args.greeting,
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
                            v0: __mrtr_args.greeting,
                            v1: __mrtr_a0,
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
                __MrtrFlow::B0 { v0: mut greeting } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let __mrtr_in0 = ::mrtr::__private::elicit_input(
                                    ::mrtr::__private::builders::text("Your name?"),
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
                __MrtrFlow::B1 { v0: mut greeting, v1: mut __mrtr_t1 } => {
                    ::mrtr::__private::block(
                            __mrtr_exit,
                            __mrtr_flow_type,
                            async {
                                let name = (match ::mrtr::__private::Branch::branch(
                                    __mrtr_t1.accepted(),
                                ) {
                                    ::core::ops::ControlFlow::Continue(__mrtr_value) => {
                                        __mrtr_value
                                    }
                                    ::core::ops::ControlFlow::Break(__mrtr_residual) => {
                                        return ::mrtr::__private::Exit::done(
                                            __mrtr_exit,
                                            ::mrtr::__private::FromResidual::from_residual(
                                                __mrtr_residual,
                                            ),
                                        );
                                    }
                                });
                                return ::mrtr::__private::Exit::done(
                                    __mrtr_exit,
                                    Ok(format!("{greeting}, {name}!")),
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
