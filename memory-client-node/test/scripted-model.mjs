// A LangChain chat model that answers from a script (no network) and
// records the messages it was shown.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";

export class ScriptedChatModel extends BaseChatModel {
  constructor(replies) {
    super({});
    this.replies = [...replies];
    this.seen = [];
  }

  _llmType() {
    return "scripted";
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    this.seen.push([...messages]);
    const message = this.replies.shift();
    if (!message) throw new Error("the script has no more replies");
    return { generations: [{ message, text: typeof message.content === "string" ? message.content : "" }] };
  }
}
