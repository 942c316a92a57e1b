// LangGraph.js's checkpointer conformance suite, as published
// (`@langchain/langgraph-checkpoint-validation`), run by vitest, the test
// runner it is written for. Its CLI cannot load an initializer in the
// published build (its schema is missing from the bundle), so the suite's
// exported `validate` is called here, as its README's second way shows.
import { validate } from "@langchain/langgraph-checkpoint-validation";

import initializer from "./checkpointer-initializer.mjs";

validate(initializer);
