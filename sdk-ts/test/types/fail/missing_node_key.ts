// nodeKey and name are required.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export default defineCodeFunctionNode({ // error: TS2345 'nodeKey' is missing
  name: "Greet",
  run() {
    return {};
  },
});
