// t.array takes a data pin.
import { defineCodeFunctionNode, seq, t } from "@svc/sdk";

export const pin = t.array(seq.in()); // error: TS2345 SequencePin
