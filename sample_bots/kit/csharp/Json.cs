// A small JSON reader and writer for the C# kit (Mono's class library has no JSON reader
// that every install carries). Objects are JsonObject (keys in the order read), arrays
// List<object>, strings string, numbers JsonNumber (their text kept, so a value is written
// back exactly as read), true/false bool, null null.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Kozyri
{
    /// <summary>A message the kit cannot use: malformed JSON, a missing or mistyped key.</summary>
    public class KitException : Exception
    {
        public KitException(string message) : base(message) { }
    }

    /// <summary>A JSON number, its text as read.</summary>
    public sealed class JsonNumber
    {
        public readonly string Text;
        public JsonNumber(string text) { Text = text; }
        public long ToLong() { return long.Parse(Text, CultureInfo.InvariantCulture); }
        public double ToDouble() { return double.Parse(Text, CultureInfo.InvariantCulture); }
        public override string ToString() { return Text; }
        public override bool Equals(object other) { var n = other as JsonNumber; return n != null && n.Text == Text; }
        public override int GetHashCode() { return Text.GetHashCode(); }
    }

    /// <summary>A JSON object whose keys keep their order (a new key goes last).</summary>
    public sealed class JsonObject
    {
        private readonly List<string> keys = new List<string>();
        private readonly Dictionary<string, object> values = new Dictionary<string, object>();

        public IList<string> Keys { get { return keys.AsReadOnly(); } }
        public bool ContainsKey(string key) { return values.ContainsKey(key); }

        /// <summary>The value of key, or null when absent.</summary>
        public object this[string key]
        {
            get { object value; return values.TryGetValue(key, out value) ? value : null; }
            set { if (!values.ContainsKey(key)) keys.Add(key); values[key] = value; }
        }

        public void Remove(string key)
        {
            if (values.Remove(key)) keys.Remove(key);
        }

        public override string ToString() { return Json.Write(this); }
    }

    public static class Json
    {
        private const int MaxDepth = 512;

        /// <summary>The value of one whole JSON text; KitException says what is wrong and where.</summary>
        public static object Parse(string text)
        {
            var reader = new Reader(text);
            reader.Blanks();
            object value = reader.Value(0);
            reader.Blanks();
            if (reader.Pos != text.Length) throw reader.Error("the end of the text");
            return value;
        }

        private sealed class Reader
        {
            private readonly string text;
            public int Pos;

            public Reader(string text) { this.text = text; }

            public KitException Error(string expected)
            {
                string found = Pos < text.Length ? "'" + text[Pos] + "'" : "the end";
                return new KitException("malformed JSON: expected " + expected + " at character " + Pos + ", found " + found);
            }

            private char Peek() { return Pos < text.Length ? text[Pos] : '\0'; }

            public void Blanks()
            {
                while (Pos < text.Length && (text[Pos] == ' ' || text[Pos] == '\t' || text[Pos] == '\n' || text[Pos] == '\r')) Pos++;
            }

            private void Expect(char c)
            {
                if (Pos >= text.Length || text[Pos] != c) throw Error("'" + c + "'");
                Pos++;
            }

            public object Value(int depth)
            {
                if (depth > MaxDepth) throw new KitException("malformed JSON: nested more than " + MaxDepth + " deep");
                if (Pos >= text.Length) throw Error("a value");
                char c = text[Pos];
                if (c == '{') return Object(depth);
                if (c == '[') return Array(depth);
                if (c == '"') return String();
                if (c == 't') return Word("true", true);
                if (c == 'f') return Word("false", false);
                if (c == 'n') return Word("null", null);
                if (c == '-' || (c >= '0' && c <= '9')) return Number();
                throw Error("a value");
            }

            private object Word(string word, object value)
            {
                if (string.CompareOrdinal(text, Pos, word, 0, word.Length) != 0) throw Error(word);
                Pos += word.Length;
                return value;
            }

            private JsonObject Object(int depth)
            {
                var result = new JsonObject();
                Pos++;
                Blanks();
                if (Peek() == '}') { Pos++; return result; }
                while (true)
                {
                    Blanks();
                    if (Peek() != '"') throw Error("a key in quotes");
                    string key = String();
                    Blanks();
                    Expect(':');
                    Blanks();
                    result[key] = Value(depth + 1);
                    Blanks();
                    if (Peek() == ',') { Pos++; continue; }
                    Expect('}');
                    return result;
                }
            }

            private List<object> Array(int depth)
            {
                var result = new List<object>();
                Pos++;
                Blanks();
                if (Peek() == ']') { Pos++; return result; }
                while (true)
                {
                    Blanks();
                    result.Add(Value(depth + 1));
                    Blanks();
                    if (Peek() == ',') { Pos++; continue; }
                    Expect(']');
                    return result;
                }
            }

            private string String()
            {
                var result = new StringBuilder();
                Pos++;
                while (true)
                {
                    if (Pos >= text.Length) throw Error("the closing quote");
                    char c = text[Pos++];
                    if (c == '"') return result.ToString();
                    if (c < 0x20) { Pos--; throw Error("no control character inside a string"); }
                    if (c != '\\') { result.Append(c); continue; }
                    if (Pos >= text.Length) throw Error("an escape");
                    char e = text[Pos++];
                    switch (e)
                    {
                        case '"': result.Append('"'); break;
                        case '\\': result.Append('\\'); break;
                        case '/': result.Append('/'); break;
                        case 'b': result.Append('\b'); break;
                        case 'f': result.Append('\f'); break;
                        case 'n': result.Append('\n'); break;
                        case 'r': result.Append('\r'); break;
                        case 't': result.Append('\t'); break;
                        case 'u':
                            int code;
                            if (Pos + 4 > text.Length || !int.TryParse(text.Substring(Pos, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out code))
                                throw Error("four hex digits");
                            Pos += 4;
                            result.Append((char)code);
                            break;
                        default:
                            Pos--;
                            throw Error("an escape (one of \"\\/bfnrtu)");
                    }
                }
            }

            private bool Digits()
            {
                int start = Pos;
                while (Pos < text.Length && text[Pos] >= '0' && text[Pos] <= '9') Pos++;
                return Pos > start;
            }

            private JsonNumber Number()
            {
                int start = Pos;
                if (Peek() == '-') Pos++;
                if (Peek() == '0') Pos++;
                else if (!Digits()) throw Error("a digit");
                if (Peek() == '.') { Pos++; if (!Digits()) throw Error("a digit after the point"); }
                if (Peek() == 'e' || Peek() == 'E')
                {
                    Pos++;
                    if (Peek() == '+' || Peek() == '-') Pos++;
                    if (!Digits()) throw Error("a digit in the exponent");
                }
                return new JsonNumber(text.Substring(start, Pos - start));
            }
        }

        /// <summary>Compact JSON for value, on one line (every control character escaped).</summary>
        public static string Write(object value)
        {
            var result = new StringBuilder();
            Write(result, value);
            return result.ToString();
        }

        private static void Write(StringBuilder result, object value)
        {
            if (value == null) { result.Append("null"); return; }
            if (value is string) { Quote(result, (string)value); return; }
            if (value is bool) { result.Append((bool)value ? "true" : "false"); return; }
            if (value is JsonNumber) { result.Append(((JsonNumber)value).Text); return; }
            if (value is int || value is long) { result.Append(Convert.ToInt64(value).ToString(CultureInfo.InvariantCulture)); return; }
            if (value is double) { result.Append(((double)value).ToString("R", CultureInfo.InvariantCulture)); return; }
            var obj = value as JsonObject;
            if (obj != null)
            {
                result.Append('{');
                for (int i = 0; i < obj.Keys.Count; i++)
                {
                    if (i > 0) result.Append(',');
                    Quote(result, obj.Keys[i]);
                    result.Append(':');
                    Write(result, obj[obj.Keys[i]]);
                }
                result.Append('}');
                return;
            }
            var list = value as System.Collections.IEnumerable;
            if (list != null)
            {
                result.Append('[');
                bool first = true;
                foreach (object item in list)
                {
                    if (!first) result.Append(',');
                    first = false;
                    Write(result, item);
                }
                result.Append(']');
                return;
            }
            Quote(result, value.ToString());
        }

        private static void Quote(StringBuilder result, string s)
        {
            result.Append('"');
            foreach (char c in s)
            {
                if (c == '"' || c == '\\') result.Append('\\').Append(c);
                else if (c == '\n') result.Append("\\n");
                else if (c < 0x20 || c > 0x7e) result.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                else result.Append(c);
            }
            result.Append('"');
        }

        /// <summary>A deep copy of a parsed value (objects and lists copied; the rest is immutable).</summary>
        public static object Copy(object value)
        {
            var obj = value as JsonObject;
            if (obj != null)
            {
                var copy = new JsonObject();
                foreach (string key in obj.Keys) copy[key] = Copy(obj[key]);
                return copy;
            }
            var list = value as List<object>;
            if (list != null) return list.ConvertAll(Copy);
            return value;
        }
    }
}
