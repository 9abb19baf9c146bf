"""Python sources: what a module imports (`imports`), the facts every Python check shares
(`index`), what is already gated for one GPU stack (`gates`), the declarative `python`
matcher (`matcher`) and the checks it cannot say (`rules`). Nothing here imports or runs the
code it reads."""
