import { defineCodeFunctionNode, t } from "@svc/sdk";

// TextEncoder, btoa and atob, TextDecoder.
export default defineCodeFunctionNode({
  nodeKey: "corpus.base64",
  name: "Base64",
  inputs: { text: t.string() },
  outputs: { encoded: t.string(), decoded: t.string(), bytes: t.number() },
  run({ inputs }) {
    const bytes = new TextEncoder().encode(inputs.text);
    const binary = Array.from(bytes, (b) => String.fromCharCode(b)).join("");
    const encoded = btoa(binary);
    const back = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    return { encoded, decoded: new TextDecoder().decode(back), bytes: bytes.length };
  },
});
