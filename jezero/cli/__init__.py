def main():
    print("jezero")
