// Starter kit for Kozyri Arena bots in C# (Mono: mcs and mono; no NuGet packages).
//
// Derive from Kozyri.Bot, override Choose and call Run(). The kit speaks protocol v1: it
// answers hello with ready, turns every request into a call to Choose and sends the answer,
// and returns on shutdown. It asks for observations as deltas and rebuilds each whole
// observation from them, key for key and value for value as the referee would send it (set
// Observations = "full" in your constructor to be sent each one whole). stdout belongs to the
// protocol: Run keeps it for itself and points Console.Out at stderr, so a stray
// Console.WriteLine is a log line, never invalid output. Log with Bot.Log. On the platform
// your bot is frozen between its turns: think inside Choose.
//
//   class First : Kozyri.Bot {
//       public override int Choose(Kozyri.Observation observation, List<Kozyri.Action> legal) { return 0; }
//       static void Main() { new First().Run(); }
//   }
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace Kozyri
{
    /// <summary>One legal action as sent: its type, its card if it has one, every key in Raw.</summary>
    public sealed class Action
    {
        public readonly string Type;
        public readonly string Card;
        public readonly JsonObject Raw;

        public Action(JsonObject raw)
        {
            Raw = raw;
            Type = Wire.Text(raw, "type");
            Card = raw["card"] as string;
        }

        public override string ToString() { return Json.Write(Raw); }
    }

    /// <summary>Everything your seat may know, whole; typed getters for the keys every game has,
    /// Raw for the rest (each rulebook in seeds/ lists them). Your own copy: change it freely.</summary>
    public sealed class Observation
    {
        public readonly JsonObject Raw;

        public Observation(JsonObject raw) { Raw = raw; }

        public string Game { get { return Raw["game"] as string; } }
        public int Seat { get { return (int)Wire.Number(Raw, "seat"); } }

        /// <summary>Your cards, e.g. ["8S", "QS"].</summary>
        public List<string> Hand { get { return Wire.List(Raw, "hand").ConvertAll(card => (string)card); } }

        /// <summary>How many cards each seat holds.</summary>
        public List<long> HandCounts { get { return Wire.List(Raw, "hand_counts").ConvertAll(n => ((JsonNumber)n).ToLong()); } }

        /// <summary>The public events of the deal, each an object with a "type".</summary>
        public List<JsonObject> History { get { return Wire.List(Raw, "history").ConvertAll(e => (JsonObject)e); } }

        public object this[string key] { get { return Raw[key]; } }

        public override string ToString() { return Json.Write(Raw); }
    }

    /// <summary>Card helpers: "TH" is the ten of hearts; ranks 5..14 (the ace is 14).</summary>
    public static class Cards
    {
        public const string Ranks = "56789TJQKA";
        public static int Rank(string card) { return Ranks.IndexOf(card[0]) + 5; }
        public static char Suit(string card) { return card[1]; }

        /// <summary>Does card beat top for a player whose own trump suit is trump (null: none)?</summary>
        public static bool Beats(string card, string top, char? trump)
        {
            if (Suit(card) == Suit(top)) return Rank(card) > Rank(top);
            return trump.HasValue && Suit(card) == trump.Value;
        }
    }

    /// <summary>Typed reads of wire objects, with a clear error for a missing or mistyped key.</summary>
    public static class Wire
    {
        public static string Text(JsonObject o, string key)
        {
            var value = o[key] as string;
            if (value == null) throw new KitException("expected a string at '" + key + "', got " + Json.Write(o[key]));
            return value;
        }

        public static long Number(JsonObject o, string key)
        {
            var value = o[key] as JsonNumber;
            long result;
            if (value == null || !long.TryParse(value.Text, out result))
                throw new KitException("expected a whole number at '" + key + "', got " + Json.Write(o[key]));
            return result;
        }

        public static List<object> List(JsonObject o, string key)
        {
            var value = o[key] as List<object>;
            if (value == null) throw new KitException("expected a list at '" + key + "', got " + Json.Write(o[key]));
            return value;
        }

        public static JsonObject Object(JsonObject o, string key)
        {
            var value = o[key] as JsonObject;
            if (value == null) throw new KitException("expected an object at '" + key + "', got " + Json.Write(o[key]));
            return value;
        }
    }

    public abstract class Bot
    {
        public const int ProtocolVersion = 1;

        /// <summary>Sent in ready; shown next to the manifest name (null: none).</summary>
        protected string Name = null;
        /// <summary>"delta" (the kit rebuilds each observation) or "full".</summary>
        protected string Observations = "delta";
        /// <summary>Set in Choose to store a note with the move (up to 1,024 characters).</summary>
        protected string Debug = null;
        /// <summary>From hello: the whole message, the game, the table size and your seat.</summary>
        protected JsonObject Hello = new JsonObject();
        protected string Game = "";
        protected int Players = 0;
        public int Seat { get; private set; }
        /// <summary>Of the request being answered: the bank left and this move's allowance.</summary>
        protected long TimeLeftMs = 0;
        protected long MoveMs = 0;

        private JsonObject kept = new JsonObject();

        /// <summary>True once shutdown has been read.</summary>
        public bool Finished { get; private set; }

        /// <summary>Return an index into legalActions (never empty).</summary>
        public abstract int Choose(Observation observation, List<Action> legalActions);

        public virtual void OnHello(JsonObject hello) { }

        /// <summary>The referee rejected an answer (timeout, illegal...) and played the default action.</summary>
        public virtual void OnError(JsonObject message) { Log("referee:", message["status"], message["message"]); }

        /// <summary>A deal is over; observation is your view right after it.</summary>
        public virtual void OnDealEnd(Observation observation, JsonObject message) { }

        /// <summary>The match is over; message["place"] is your place (1 is best).</summary>
        public virtual void OnMatchEnd(JsonObject message) { }

        /// <summary>Write one line to stderr (the referee keeps it with the match log and the replay).</summary>
        public static void Log(params object[] parts)
        {
            Console.Error.WriteLine(string.Join(" ", Array.ConvertAll(parts, p => p == null ? "null" : p.ToString())));
            Console.Error.Flush();
        }

        /// <summary>React to one line from the referee: the answer line to send, or null for none.
        /// Throws KitException for a malformed message.</summary>
        public string Handle(string line)
        {
            var message = Json.Parse(line) as JsonObject;
            if (message == null) throw new KitException("a message must be a JSON object, got " + line);
            switch (Wire.Text(message, "type"))
            {
                case "hello": return Ready(message);
                case "request": return Answer(message);
                case "error": OnError(message); break;
                case "deal_end": OnDealEnd(ObservationOf(message), message); break;
                case "match_end": OnMatchEnd(message); break;
                case "shutdown": Finished = true; break;
            }
            return null; // later versions may add messages: ignore them
        }

        private string Ready(JsonObject message)
        {
            Hello = message;
            Game = Wire.Text(message, "game");
            Players = (int)Wire.Number(message, "players");
            Seat = (int)Wire.Number(message, "seat");
            OnHello(message);
            var ready = new JsonObject();
            ready["type"] = "ready";
            ready["protocol"] = ProtocolVersion;
            if (Name != null) ready["name"] = Name;
            if (Observations != "full") ready["observations"] = Observations;
            return Json.Write(ready);
        }

        private string Answer(JsonObject request)
        {
            Debug = null;
            var observation = ObservationOf(request);
            var legal = new List<Action>();
            foreach (object item in Wire.List(request, "legal_actions"))
            {
                var action = item as JsonObject;
                if (action == null) throw new KitException("a legal action must be an object, got " + Json.Write(item));
                legal.Add(new Action(action));
            }
            TimeLeftMs = request["time_left_ms"] is JsonNumber ? ((JsonNumber)request["time_left_ms"]).ToLong() : 0;
            MoveMs = request["move_ms"] is JsonNumber ? ((JsonNumber)request["move_ms"]).ToLong() : 0;
            int index = Choose(observation, legal);
            var reply = new JsonObject();
            reply["type"] = "action";
            reply["id"] = request["id"];
            reply["index"] = index;
            if (!string.IsNullOrEmpty(Debug)) reply["debug"] = Debug;
            return Json.Write(reply);
        }

        /// <summary>The whole observation a request or deal_end carries (whole or as a delta), as a copy.</summary>
        private Observation ObservationOf(JsonObject message)
        {
            if (message.ContainsKey("delta")) ApplyDelta(kept, Wire.Object(message, "delta"));
            else kept = Wire.Object(message, "observation");
            return new Observation((JsonObject)Json.Copy(kept));
        }

        /// <summary>Bring observation (the last one received, or empty) up to date with delta, in
        /// place: keys in "drop" go, keys in "set" take their new value, lists in "append" grow.</summary>
        public static JsonObject ApplyDelta(JsonObject observation, JsonObject delta)
        {
            if (delta.ContainsKey("drop"))
                foreach (object key in Wire.List(delta, "drop")) observation.Remove(key as string ?? "");
            if (delta.ContainsKey("set"))
            {
                var set = Wire.Object(delta, "set");
                foreach (string key in set.Keys) observation[key] = set[key];
            }
            if (delta.ContainsKey("append"))
            {
                var append = Wire.Object(delta, "append");
                foreach (string key in append.Keys)
                {
                    var list = observation[key] as List<object>;
                    var items = append[key] as List<object>;
                    if (list == null || items == null)
                        throw new KitException("the delta appends to '" + key + "', which is not a list");
                    list.AddRange(items);
                }
            }
            return observation;
        }

        /// <summary>The protocol loop: one message per stdin line until shutdown or the end of
        /// input. A malformed message ends the bot with status 2 and the reason on stderr.</summary>
        public void Run()
        {
            var protocol = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
            Console.SetOut(Console.Error);
            var input = new StreamReader(Console.OpenStandardInput(), new UTF8Encoding(false));
            string line;
            while (!Finished && (line = input.ReadLine()) != null)
            {
                if (line.Trim().Length == 0) continue;
                string answer;
                try
                {
                    answer = Handle(line);
                }
                catch (KitException error)
                {
                    Log("kozyri kit: cannot read the referee's message:", error.Message);
                    Environment.Exit(2);
                    return;
                }
                if (answer != null)
                {
                    protocol.Write(answer + "\n");
                    protocol.Flush();
                }
            }
        }
    }
}
